"""A scripted world for the Claude Code harness: one fake Messages API (the project's fake
server with this responder) plays the model inside the real CLI and the optimizer.

The model, inside an episode: first it loads the one listed skill of the task (through the
`Skill` tool) when its description says to use it, then it follows the body: "Run
scripts/NAME" makes it run that script with Bash and answer its output; otherwise it computes
"A times B" itself and answers the number, after "REPLY: " when the body says "Start with
REPLY:". The optimizer: I1 every round, and a candidate that adds the REPLY rule to a skill
whose failures show a missing "REPLY:" (and, for a skill with scripts, fixes the script's
operator).
"""

from __future__ import annotations

import json
import os
import re
import signal
from collections.abc import Mapping
from pathlib import Path
from typing import Any

REPLY_RULE = "Start with REPLY: then the number."
BASE = {"type": "message", "role": "assistant", "stop_sequence": None}


def _texts(body: Mapping[str, Any]) -> str:
    return json.dumps(body.get("messages", []), ensure_ascii=False)


def _message(body: Mapping[str, Any], content: list[dict[str, Any]], stop: str) -> dict:
    return {**BASE, "id": "msg_fake", "model": body["model"], "stop_reason": stop,
            "content": content, "usage": {"input_tokens": 40, "output_tokens": 8}}


def _question(body: Mapping[str, Any]) -> tuple[int, int] | None:
    found = re.search(r"What is (\d+) times (\d+)", _texts(body))
    return None if found is None else (int(found.group(1)), int(found.group(2)))


def _bash_results(body: Mapping[str, Any]) -> list[str]:
    """The last line of each result of the script's Bash call, in order."""
    found = []
    for message in body.get("messages", []):
        content = message.get("content")
        for block in content if isinstance(content, list) else ():
            if block.get("type") == "tool_result" and block.get("tool_use_id") == "toolu_bash":
                given = block.get("content")
                text = given if isinstance(given, str) else " ".join(
                    b.get("text", "") for b in given or () if isinstance(b, dict))
                found.append((text.strip().splitlines() or [""])[-1])
    return found


def model(body: Mapping[str, Any]) -> dict:
    text = _texts(body)
    listing = re.search(r"- ([\w-]+): (Use this skill[^\\\n]*|The instructions[^\\\n]*)", text)
    if "Launching skill" not in text:
        if listing is None:
            a, b = _question(body) or (0, 0)
            return _message(body, [{"type": "text", "text": str(a + b)}], "end_turn")
        return _message(body, [{"type": "tool_use", "id": "toolu_skill", "name": "Skill",
                                "input": {"skill": listing.group(1)}}], "tool_use")
    script = re.search(r"Run (scripts/[\w.-]+)", text)
    results = _bash_results(body)
    if script and not results:
        base = re.search(r"Base directory for this skill: (\S+?)\\n", text)
        folder = base.group(1) if base else ".claude/skills/task-skill"
        a, b = _question(body) or (0, 0)
        return _message(body, [{"type": "tool_use", "id": "toolu_bash", "name": "Bash",
                                "input": {"command": f"sh {folder}/{script.group(1)} {a} {b}",
                                          "description": "run the skill's script"}}], "tool_use")
    a, b = _question(body) or (0, 0)
    value = results[-1].strip() if results else str(a * b)
    answer = f"REPLY: {value}" if "Start with REPLY:" in text else value
    return _message(body, [{"type": "text", "text": answer}], "end_turn")


def optimizer(body: Mapping[str, Any]) -> str:
    system = body.get("system")
    system = "".join(b.get("text", "") for b in system) if isinstance(system, list) else \
        str(system or "")
    prompt = body["messages"][0]["content"]
    prompt = prompt if isinstance(prompt, str) else "".join(b.get("text", "") for b in prompt)
    if system.startswith("You are the strategy controller"):
        return '{"strategy": "I1", "form": null, "why": "the replies lack their prefix"}'
    if system.startswith("You diagnose"):
        return ""
    skill = prompt.split("<skill>\n", 1)[1].split("\n</skill>", 1)[0]
    edits = []
    if "REPLY:" in prompt and REPLY_RULE not in skill:
        edits.append(f'<edit op="insert_after"><anchor>{_body_anchor(skill)}</anchor><new>'
                     f"{REPLY_RULE}</new></edit>")
    if "echo $(($1 + $2))" in skill:
        edits.append('<edit op="replace"><old>echo $(($1 + $2))</old><new>echo $(($1 * $2))'
                     "</new></edit>")
    if not edits:
        return "no change"
    return ("<candidate>\n<form>F1</form>\n<theme>reply format</theme>\n<sources></sources>\n"
            + "\n".join(edits) + "\n</candidate>")


def _body_anchor(skill: str) -> str:
    """The last line of the body part (or of a one-part skill)."""
    body = skill.split("[[part: body]]\n", 1)[-1].split("\n\n[[part: ", 1)[0]
    return [line for line in body.splitlines() if line.strip()][-1]


class Responder:
    """Routes each request: the CLI's (it offers tools) to the model, the rest to the optimizer.
    With `kill_after`, the process `pid_file` names is sent SIGKILL at that model call."""

    def __init__(self, kill_after: int = 0, pid_file: Path | None = None) -> None:
        self.model_calls = 0
        self.kill_after, self.pid_file = kill_after, pid_file

    def __call__(self, body: Mapping[str, Any]) -> Any:
        if body.get("tools"):
            self.model_calls += 1
            if self.kill_after and self.model_calls == self.kill_after and self.pid_file:
                os.kill(int(self.pid_file.read_text()), signal.SIGKILL)
            return model(body)
        return optimizer(body)


def write_task(folder: Path, n: int = 4) -> Path:
    """A JSONL task of multiplications, answered "REPLY: <product>"."""
    folder.mkdir(parents=True, exist_ok=True)
    for split, offset in (("train", 2), ("test", 40)):
        rows = [{"id": f"{split}-{i}", "input": f"What is {offset + i} times {i + 3}?",
                 "expected": f"REPLY: {(offset + i) * (i + 3)}"} for i in range(n)]
        (folder / f"{split}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (folder / "initial_skill.txt").write_text("Answer the question.\n")
    return folder
