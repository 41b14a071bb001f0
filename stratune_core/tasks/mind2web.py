"""Mind2Web: teacher-forced next-action prediction, element accuracy per task (docs/design.md,
"Tasks").

One request per scoreable step (prior gold actions as history, the step's 20 candidates);
steps with `forced_gold` or `scoreable: false` are fixed failures with no request. Score =
element accuracy over ALL steps of the task (solved at >= 0.8); aux = mean action F1.
Text is kept verbatim (the data holds zero-width characters; never normalise before comparing).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, ClassVar

from attrs import frozen

from llm_cache.records import Request, Response
from stratune_core.records.base import Sample, Score
from stratune_core.tasks.common import BenchmarkTask, head
from stratune_core.tasks.mind2web_records import Mind2WebItem, Step

MAX_TOKENS = 16384
# paper App. D: a continuous-score sample counts as solved at 0.9 (the released code uses 0.8;
# `Config.success_threshold` sets another bar)
SOLVED_AT = 0.9
HISTORY = 5
_ACTION = re.compile(
    r"(CLICK|TYPE|SELECT)\s*\[\s*([^\]\s]+)\s*\](?:\s*\[([^\]]*)\])?", re.IGNORECASE
)
_ACTION_LINE = re.compile(r"ACTION\s*:(.*)$", re.IGNORECASE | re.MULTILINE)
_BACKTICK = re.compile(r"`([^`]+)`")
_SAID = re.compile(r"(?:^|; )(\d+): (?:CLICK|TYPE|SELECT) \[([^\]]*)\]")  # Score.output's steps
TRAJECTORY_STEPS = 10


@frozen(kw_only=True)
class Action:
    op: str
    element_id: str
    value: str = ""


def parse_action(text: str) -> Action | None:
    """Scopes in order: `ACTION:` line tails (last first), backtick spans (last first), the
    whole text; in the first scope holding an action, its last action wins."""
    scopes = [m.group(1) for m in _ACTION_LINE.finditer(text)][::-1]
    scopes += [m.group(1) for m in _BACKTICK.finditer(text)][::-1]
    scopes.append(text)
    for scope in scopes:
        matches = list(_ACTION.finditer(scope))
        if matches:
            m = matches[-1]
            value = (m.group(3) or "").strip().strip("\"'")
            return Action(op=m.group(1).upper(), element_id=m.group(2), value=value)
    return None


def action_f1(predicted: Action | None, op: str, value: str) -> float:
    """Token-set F1 between "OP value" strings (CLICK carries no value)."""
    if predicted is None:
        return 0.0

    def tokens(o: str, v: str) -> set[str]:
        return set(f"{o} {v if o != 'CLICK' else ''}".lower().split())

    p, g = tokens(predicted.op, predicted.value), tokens(op, value)
    common = len(p & g)
    if common == 0:
        return 0.0
    precision, recall = common / len(p), common / len(g)
    return 2 * precision * recall / (precision + recall)


def step_prompt(item: Mind2WebItem, step: Step) -> str:
    history = item.action_reprs[max(0, step.i - HISTORY) : step.i]
    previous = "\n".join(f"{n}. {a}" for n, a in enumerate(history, start=1)) or "None"
    lines = []
    for c in step.candidates:
        parts = [f"[{c.id}]", f"<{c.tag}>", c.extra, c.text]
        lines.append(" ".join(p for p in parts if p))
    return (
        f"Task: {item.task}\nWebsite: {item.website} ({item.domain})\n\n"
        f"Previous actions:\n{previous}\n\nCandidate elements:\n" + "\n".join(lines)
        + "\n\nNext action:"
    )


def _gold_text(item: Mind2WebItem, step: Step) -> str:
    if 0 <= step.i < len(item.action_reprs):
        return item.action_reprs[step.i]
    return f"{step.op} {step.value}".strip()


@frozen(kw_only=True)
class Mind2WebTask(BenchmarkTask):
    NAME: ClassVar[str] = "mind2web"
    ANSWER_MARKUP: ClassVar[tuple[str, ...]] = ("ACTION:",)
    SOLVED_AT: ClassVar[float] = SOLVED_AT
    BINARY: ClassVar[bool] = False
    # the released code: solved at 0.8 (dataset_profiles) and configs/mind2web.json: 8 saved
    # skills, 3 final contenders, a reserve of 2400, a ranking subset of 96
    PROFILE_PRESETS: ClassVar[Mapping[str, Mapping[str, Any]]] = MappingProxyType({"released": {
        "success_threshold": 0.8, "archive_cap": 8, "final_seats": 3, "reserve": 2400,
        "ranking_size": 96}})
    max_tokens: int = MAX_TOKENS

    def requests(self, skill: str, sample: Sample, model: str) -> tuple[Request, ...]:
        """One request per scoreable step; the other steps are fixed failures."""
        item: Mind2WebItem = sample.payload
        return tuple(
            self.request(skill, model, step_prompt(item, step)) for step in item.steps if step.scoreable
        )

    def score(self, sample: Sample, responses: tuple[Response, ...]) -> Score:
        item: Mind2WebItem = sample.payload
        texts = iter(r.text for r in responses)
        correct, f1s, shown, failures = 0, [], [], []
        for n, step in enumerate(item.steps, start=1):
            if not step.scoreable:
                f1s.append(0.0)
                failures.append(f"step {n}: gold not among candidates (fixed failure)")
                continue
            predicted = parse_action(next(texts, ""))
            f1s.append(action_f1(predicted, step.op, step.value))
            ok = predicted is not None and predicted.element_id in step.gold_ids
            correct += ok
            said = "no action" if predicted is None else _render(predicted)
            shown.append(f"{n}: {said}")
            if not ok:
                failures.append(f"step {n}: said {said}, gold {_gold_text(item, step)}")
        total = len(item.steps)
        value = correct / total if total else 0.0
        aux = sum(f1s) / total if total else 0.0
        summary = ""
        if value < SOLVED_AT - 1e-9:
            summary = head(f"{correct}/{total} steps right; " + "; ".join(failures[:3]), 300)
        return Score(value=value, output=head("; ".join(shown)), summary=summary, aux=aux)

    def describe(self, sample: Sample) -> str:
        item: Mind2WebItem = sample.payload
        n_open = sum(s.scoreable for s in item.steps)
        return head(
            f"Task: {item.task}\nWebsite: {item.website} ({item.domain}); "
            f"{len(item.steps)} steps, {n_open} scoreable; each step offers 20 candidate elements"
        )

    def expected(self, sample: Sample) -> str:
        item: Mind2WebItem = sample.payload
        return head("\n".join(f"{n}. {a}" for n, a in enumerate(item.action_reprs, 1)), 400)

    def trajectory(self, sample: Sample, output: str) -> str | None:
        """The released profile's trajectories block (`task.StepTrajectories`): the task and its
        first steps' gold actions, each + when the predicted element (read back from the
        execution's `output`, "n: CLICK [id]; ...") is a gold one, else -."""
        item: Mind2WebItem = sample.payload
        said = {int(n): element for n, element in _SAID.findall(output)}
        marks = []
        for n, step in enumerate(item.steps[:TRAJECTORY_STEPS], start=1):
            ok = step.scoreable and said.get(n) in step.gold_ids
            marks.append(f"{'+' if ok else '-'}{head(_gold_text(item, step), 70)}")
        if not marks:
            return None
        return (f"[{item.website}/{item.domain}] {head(item.task, 110)}\n    "
                + " | ".join(marks))


def _render(action: Action) -> str:
    if action.op == "CLICK":
        return f"CLICK [{action.element_id}]"
    return f"{action.op} [{action.element_id}] [{action.value}]"
