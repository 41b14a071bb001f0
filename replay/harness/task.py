"""A task run with a harness target: each execution's one request carries the whole skill folder
as Claude Code will find it (SKILL.md with its front matter, and the references and scripts),
the prompt, the tools the episode may use and its turn limit, so the request's key covers every
input of the episode; the harness backend installs the folder and runs the CLI.

The folder comes from `--skill DIR` (its name, front matter and files; the parts the run learns
replaced by the candidate's), or, for a task without one, is made of the skill text under a
description that asks the harness to use it for every request.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

import attrs

from llm_cache.records import Message, Request, Response
from replay.skills.agent_skill import AgentSkill, read_skill_folder, skill_markdown
from replay.skills.skill_parts import DESCRIPTION, with_description
from stratune_core.records.base import Sample, Score, TaskInfo
from stratune_core.records.parts import SkillParts
from stratune_core.records.task import Task

DEFAULT_NAME = "task-skill"
DEFAULT_DESCRIPTION = ("The instructions for this task. Use this skill for every request: load "
                       "it before answering.")
DEFAULT_TOOLS = ("Skill", "Bash", "Read")


def _files_of(folder: Path) -> dict[str, str]:
    """The folder's text files other than SKILL.md (binary files are not carried)."""
    found: dict[str, str] = {}
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and not p.is_symlink()):
        name = path.relative_to(folder).as_posix()
        if name == "SKILL.md":
            continue
        try:
            found[name] = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
    return found


@attrs.frozen(kw_only=True)
class HarnessTask:
    base: Task
    tools: tuple[str, ...] = DEFAULT_TOOLS
    max_turns: int = 8
    folder: AgentSkill | None = None
    fixed: Mapping[str, str] = attrs.field(factory=dict)  # the folder's files as they are

    @classmethod
    def of(cls, base: Task, *, skill_dir: str | None, tools: Sequence[str],
           max_turns: int) -> HarnessTask:
        folder = None if skill_dir is None else read_skill_folder(skill_dir)
        fixed = {} if folder is None else _files_of(folder.folder)
        return cls(base=base, tools=tuple(tools) or DEFAULT_TOOLS, max_turns=max_turns,
                   folder=folder, fixed=fixed)

    @property
    def info(self) -> TaskInfo:
        # an episode's transcript is longer than one reply
        return attrs.evolve(self.base.info, output_chars=1600)

    def split(self, name: str) -> tuple[Sample, ...]:
        return self.base.split(name)

    def describe(self, sample: Sample) -> str:
        return self.base.describe(sample)

    def expected(self, sample: Sample) -> str:
        return self.base.expected(sample)

    def files(self, skill: str) -> tuple[str, dict[str, str]]:
        """(the folder's name, its files) with `skill`'s parts in their places."""
        parts = SkillParts.read(skill)
        learned = parts.as_dict() if parts.names else {"body": skill}
        files = dict(self.fixed)
        files.update({k: v + "\n" for k, v in learned.items() if "/" in k})
        if self.folder is None:
            front = f"name: {DEFAULT_NAME}\ndescription: {json.dumps(DEFAULT_DESCRIPTION)}\n"
            description = learned.get(DESCRIPTION)
            if description is not None:
                front = with_description(front, description)
            files["SKILL.md"] = f"---\n{front}---\n\n{learned['body'].strip()}\n"
            return DEFAULT_NAME, files
        front = self.folder.front_matter
        if DESCRIPTION in learned and learned[DESCRIPTION] != self.folder.description.strip():
            front = with_description(front, learned[DESCRIPTION])
        files["SKILL.md"] = skill_markdown(attrs.evolve(self.folder, front_matter=front),
                                           learned["body"])
        return self.folder.name, files

    def requests(self, skill: str, sample: Sample, model: str) -> tuple[Request, ...]:
        (first,) = self.base.requests("", sample, model)
        name, files = self.files(skill)
        setup = json.dumps({"skill": name, "files": files, "tools": list(self.tools),
                            "max_turns": self.max_turns}, sort_keys=True, ensure_ascii=False)
        prompt = first.user_text()
        return (Request(role=first.role, model=model, system=setup,
                        messages=(Message.user(prompt),), max_tokens=first.max_tokens,
                        kind=first.kind),)

    def score(self, sample: Sample, responses: tuple[Response, ...]) -> Score:
        """The base task's score of the episode's final message, with its transcript as the
        output the optimizer reads and, for a failed episode, the reason as the summary."""
        (reply,) = responses
        episode = json.loads(reply.text) if reply.text.startswith("{") else {"result": reply.text}
        scored = self.base.score(sample, (attrs.evolve(reply, text=episode.get("result", "")),))
        summary = scored.summary
        if episode.get("error"):
            summary = f"the episode failed: {episode['error']}; {summary}".rstrip("; ")
        return attrs.evolve(scored, output=episode.get("transcript", scored.output),
                            summary=summary)
