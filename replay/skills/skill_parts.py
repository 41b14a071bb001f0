"""An Agent Skills folder learnt as several parts (`--skill-parts`): beside the body, the
front matter's `description` and the Markdown files under `references/` (the kinds named), as
one document of named parts (`stratune_core/records/parts.py`). With no kind named the skill is
the body alone, the one-part skill it always was.

Back out, each learned part goes where it came from: the body below the same front matter, the
description into its field (the rest of the front matter byte for byte), each reference into its
file; a part the run left as it was leaves its bytes as they were.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import yaml

from replay.commands.arg_types import ordered_kinds
from replay.skills.agent_skill import (
    DESCRIPTION_MAX,
    OUT_DIR,
    SKILL_FILE,
    AgentSkill,
    SkillFolderError,
    read_skill_folder,
    write_skill_folder,
)
from stratune_core.records.parts import SkillParts, part_names, render_parts

BODY = "body"
DESCRIPTION = "description"
REFERENCES = "references"
SCRIPTS = "scripts"
# What the optimizer is shown of the scripts: each, and all of them, under these sizes (a
# folder over them is refused: a script shown cut could not be edited)
SCRIPT_CHARS, SCRIPTS_CHARS = 8_000, 24_000


def check_kinds(kinds: Sequence[str], where: str = "--skill-parts") -> tuple[str, ...]:
    """The kinds in their fixed order, or one line naming the unknown one."""
    try:
        return ordered_kinds(kinds)
    except ValueError as exc:
        raise SkillFolderError(f"{where}: {exc}") from None


def reference_files(skill: AgentSkill) -> tuple[Path, ...]:
    folder = skill.folder / REFERENCES
    if not folder.is_dir():
        return ()
    return tuple(sorted(p for p in folder.rglob("*.md") if p.is_file() and not p.is_symlink()))


def script_files(skill: AgentSkill) -> tuple[Path, ...]:
    folder = skill.folder / SCRIPTS
    if not folder.is_dir():
        return ()
    return tuple(sorted(p for p in folder.rglob("*") if p.is_file() and not p.is_symlink()))


def _scripts(skill: AgentSkill) -> dict[str, str]:
    files = script_files(skill)
    if not files:
        raise SkillFolderError(f"{skill.folder / SCRIPTS}: no scripts to learn; drop `scripts` "
                               "from --skill-parts")
    found: dict[str, str] = {}
    for path in files:
        text = _reference_text(path).strip("\n")
        name = path.relative_to(skill.folder).as_posix()
        if len(text) > SCRIPT_CHARS:
            raise SkillFolderError(f"{path}: {len(text):,} characters, over the {SCRIPT_CHARS:,} "
                                   "the optimizer can be shown of one script; split it")
        if name.endswith(".py"):  # before anything is paid: it would fail every episode
            try:
                compile(text, str(path), "exec", dont_inherit=True)
            except SyntaxError as exc:
                raise SkillFolderError(f"{path}:{exc.lineno}: {exc.msg}; fix the script's "
                                       "syntax") from None
        found[name] = text
    if sum(map(len, found.values())) > SCRIPTS_CHARS:
        raise SkillFolderError(f"{skill.folder / SCRIPTS}: over the {SCRIPTS_CHARS:,} characters "
                               "of scripts the optimizer can be shown; learn fewer")
    return found


def _reference_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise SkillFolderError(f"{path}: not UTF-8 text; save the file as UTF-8") from None


def folder_document(skill: AgentSkill, kinds: Sequence[str]) -> str:
    """The skill the run learns from `skill`: its body alone when `kinds` is empty, else the
    document of its parts (description, body, references/*.md in path order)."""
    kinds = check_kinds(kinds)
    if not kinds:
        return skill.body
    parts: dict[str, str] = {}
    if DESCRIPTION in kinds:
        parts[DESCRIPTION] = skill.description.strip()
    parts[BODY] = skill.body
    if REFERENCES in kinds:
        files = reference_files(skill)
        if not files:
            raise SkillFolderError(f"{skill.folder / REFERENCES}: no Markdown files to learn; "
                                   "drop `references` from --skill-parts")
        for path in files:
            parts[path.relative_to(skill.folder).as_posix()] = _reference_text(path).strip("\n")
    if SCRIPTS in kinds:
        parts.update(_scripts(skill))
    try:
        return render_parts(parts)
    except ValueError as exc:
        raise SkillFolderError(f"{skill.folder}: {exc}") from None


def learned_parts(skill: AgentSkill, kinds: Sequence[str], text: str) -> dict[str, str]:
    """The learned document `text` read back into its parts (the body alone for no kinds)."""
    if not kinds:
        return {BODY: text}
    parts = SkillParts.read(text)
    expected = part_names(folder_document(skill, kinds))
    added = tuple(n for n in parts.names if n not in expected and n.startswith(f"{SCRIPTS}/"))
    if parts.names != expected + added:
        raise SkillFolderError(f"final skill: parts {list(parts.names)} differ from the folder's "
                               f"{list(expected)}")
    return parts.as_dict()


def with_description(front_matter: str, description: str) -> str:
    """The front matter with its `description` value replaced, every other byte kept."""
    if not description.strip() or len(description) > DESCRIPTION_MAX:
        raise SkillFolderError(f"learned description: {len(description)} characters; the format "
                               f"takes 1-{DESCRIPTION_MAX}")
    root = yaml.compose(front_matter)
    assert isinstance(root, yaml.MappingNode)  # read_skill_folder checked it is a mapping
    for key, value in root.value:
        if key.value == DESCRIPTION:
            start, end = key.start_mark.index, value.end_mark.index
            old = front_matter[start:end]
            new = f"{DESCRIPTION}: {json.dumps(description, ensure_ascii=False)}"
            tail = old[len(old.rstrip("\n")):]  # a block scalar's span ends with its newlines
            return front_matter[:start] + new + tail + front_matter[end:]
    raise SkillFolderError(f"{SKILL_FILE}: front matter: no description field")


def write_learned_folder(skill: AgentSkill, kinds: Sequence[str], text: str,
                         parent: Path) -> Path:
    """The learned folder of `skill` under `parent`: the body, the description and the
    references the run learnt, each where it came from; the parts the run left as they were
    keep the source's bytes."""
    parts = learned_parts(skill, kinds, text)
    front = None
    if DESCRIPTION in parts and parts[DESCRIPTION] != skill.description.strip():
        front = with_description(skill.front_matter, parts[DESCRIPTION])
    files = {}
    for name, part in parts.items():
        if name.startswith((f"{REFERENCES}/", f"{SCRIPTS}/")):
            source = skill.folder / name
            original = _reference_text(source) if source.is_file() else ""
            if part != original.strip("\n"):
                files[name] = part + ("\n" if original.endswith("\n") or not original else "")
    return write_skill_folder(skill, parts[BODY], parent, front_matter=front, files=files)


def write_learned(skill: str | Path | None, kinds: Sequence[str], out: str | Path) -> Path | None:
    """At the end of a run from the skill folder `skill`: the run's final skill as a folder of
    the same shape, OUT/skill/<name>/ (None when the run did not start from a folder)."""
    if skill is None:
        return None
    final = (Path(out) / "final_skill.txt").read_text(encoding="utf-8")
    return write_learned_folder(read_skill_folder(skill), kinds, final, Path(out) / OUT_DIR)


def check_learned(parent: Path, final_text: str, kinds: Sequence[str] = ()) -> str | None:
    """`stratune replay`: each learned skill folder under `parent` (OUT/skill/) holds the
    recomputed final skill (its body, or its parts for `kinds`); None, or one line naming the
    first that does not."""
    if not parent.is_dir():
        return None
    for folder in sorted(p for p in parent.iterdir() if p.is_dir() and
                         not p.name.startswith(".")):
        try:
            learned = read_skill_folder(folder)
            held = folder_document(learned, kinds)
        except SkillFolderError as exc:
            return f"{exc} (the learned skill folder was edited)"
        if held != final_text.strip():
            what = "one of its parts" if kinds else "its body"
            return (f"{folder / SKILL_FILE}: {what} differs from the recomputed final skill "
                    "(the file was edited)")
    return None
