"""The feedback-preparation call's prompt and the reading of its reply (paper App. D.4).

One call per generating round covers every shown failure and a few successful trajectories.
A failure is shown as the generation prompt shows it: input, the target's output, the expected
answer and the scorer's account; the optimizer says what went wrong and the general instruction
the skill lacks. With the released code's "verified fixes" a failure the task can check is shown
*blind* instead (no expected answer, no scorer summary): the optimizer solves it itself and the
task's scorer checks its answer.

The records of a preparation (`Preparation`: diagnoses and success notes) live here too, so
that the prompts can render them without importing the call itself.

The reply is plain text in `<sample id="...">` blocks with labelled lines, which weak models
write more reliably than JSON; anything unreadable is skipped, never an error.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from attrs import field, frozen

from llm_cache.records import ToolSpec
from stratune_core.prompts.budget import Fitted, Part, fit
from stratune_core.prompts.tools import tools_part

PREPARATION_SYSTEM = (
    "You diagnose the answers of a target model that follows a skill (its instruction text), "
    "so that the skill can be revised. Be precise and brief; never invent facts about a sample."
)

NOTE_CHARS = 300  # a diagnosis line kept for the generation prompt


@frozen(kw_only=True)
class Diagnosis:
    sample_id: str
    wrong: str = ""
    rule: str = ""  # the instruction the skill lacks, addressed to the target model
    verified: bool = False  # the optimizer's blind answer passed the task's scorer


@frozen(kw_only=True)
class SuccessNote:
    sample_id: str
    worked: str


@frozen(kw_only=True)
class Fix:
    """The released code's verified fix of a failure (`round/verified_fixes.py`): the optimizer's
    blind answer, accepted by the task's scorer (`verified`, its end in `gist`) or not."""

    sample_id: str
    verified: bool
    gist: str = ""


@frozen(kw_only=True)
class Preparation:
    skill_id: str
    diagnoses: tuple[Diagnosis, ...] = field(default=(), converter=tuple)
    successes: tuple[SuccessNote, ...] = field(default=(), converter=tuple)
    fixes: tuple[Fix, ...] = field(default=(), converter=tuple)  # released code only
    blind: bool = False  # diagnoses rest on blind solves (released code's verified fixes)
    shared_rule: str = ""  # the one rule the failures share

    def diagnosis(self, sample_id: str) -> Diagnosis | None:
        return next((d for d in self.diagnoses if d.sample_id == sample_id), None)

    def fix(self, sample_id: str) -> Fix | None:
        return next((f for f in self.fixes if f.sample_id == sample_id), None)


@frozen(kw_only=True)
class PrepCase:
    """One sample shown to the preparation call. A failure with a `blind` input can be shown
    blind (that whole input, no expected answer: the optimizer solves it, the scorer checks);
    otherwise, or when the budget cannot hold the whole input, it is shown with its short
    input, expected answer and the scorer's summary."""

    sample_id: str
    input: str  # the short rendering (`Task.describe`, clipped)
    output: str
    blind: str | None = None  # the whole input, when the task can check an answer
    expected: str = ""
    problem: str = ""
    solved: bool = False  # a successful trajectory

    def block(self, blind: bool) -> str:
        if self.solved:
            head = f'<sample id="{self.sample_id}" solved="yes">'
        else:
            head = f'<sample id="{self.sample_id}" solve="{"yes" if blind else "no"}">'
        shown = self.blind if blind and self.blind is not None else self.input
        lines = [head, f"input: {shown}", f"target output: {self.output or '(empty)'}"]
        if not self.solved and not blind:
            lines.append(f"expected: {self.expected}")
            if self.problem:
                lines.append(f"problem: {self.problem}")
        lines.append("</sample>")
        return "\n".join(lines)


FAILURES = "failures"
SOLVED = "solved samples"


@frozen(kw_only=True)
class PreparationPrompt:
    """The fitted prompt and what it shows: the failures kept (`shown`), those of them shown
    blind, and the solved samples kept."""

    fitted: Fitted
    blind: frozenset[str]

    @property
    def text(self) -> str:
        return self.fitted.text

    @property
    def tokens(self) -> int:
        return self.fitted.tokens

    @property
    def dropped(self) -> tuple[tuple[str, int], ...]:
        return self.fitted.dropped

    @property
    def shown(self) -> frozenset[str]:
        return frozenset(self.fitted.kept_keys(FAILURES))

    @property
    def solved(self) -> frozenset[str]:
        return frozenset(self.fitted.kept_keys(SOLVED))


def preparation_prompt(
    *,
    format_lines: Sequence[str],
    failures: Sequence[PrepCase],
    successes: Sequence[PrepCase],
    budget: int,
    keep_failures: int,
    tools: Sequence[ToolSpec] = (),
) -> PreparationPrompt:
    """The prompt, fitted to `budget`: successful trajectories go first, then failures beyond
    the first `keep_failures`; if the kept failures' whole inputs still do not fit, the longest
    are shown in their short form instead (unverifiable, with their expected answer)."""
    blind = {c.sample_id for c in failures if c.blind is not None}
    while True:
        fitted = _fit(format_lines, failures, successes, budget, keep_failures, blind, tools)
        shown = blind & set(fitted.kept_keys(FAILURES))
        if fitted.tokens <= budget or not blind:
            return PreparationPrompt(fitted=fitted, blind=frozenset(shown))
        pool = shown or blind
        longest = max(pool, key=lambda i: len(next(c.blind or "" for c in failures
                                                    if c.sample_id == i)))
        blind.discard(longest)


def _fit(
    format_lines: Sequence[str],
    failures: Sequence[PrepCase],
    successes: Sequence[PrepCase],
    budget: int,
    keep_failures: int,
    blind: set[str],
    tools: Sequence[ToolSpec],
) -> Fitted:
    intro = (
        "A target model answered training samples under a skill. Before the skill is revised, "
        "diagnose each failure below: compare the target's output with the expected answer and "
        "the problem the scorer found, and say what the target did wrong. Then write the rule "
        "the skill lacks: one instruction to the target model that would have made its output "
        "equal the expected answer, general enough for other samples (no values from this "
        "sample). Last, write the one rule that the failures share."
    )
    if successes:
        intro += (" For each solved sample, say what the target did right that the skill "
                  "should keep.")
    lines = ["wrong: what the target did wrong, one sentence (failures only)",
             "rule: the instruction the skill lacks, one sentence addressed to the target model "
             "(failures only)"]
    if successes:
        lines.append("worked: what the target did right that the skill should keep (solved "
                     "samples only)")
    head = intro
    if blind:
        # a blind answer must follow the skill's format for the scorer to read it
        fmt = (
            "The skill asks for this output format:\n<format>\n" + "\n".join(format_lines)
            + "\n</format>"
            if format_lines
            else "The skill states no particular output format."
        )
        head += (
            ' For a failure marked solve="yes" the correct answer is not shown: solve the '
            "sample yourself and give your final answer; the task's scorer checks it, and only "
            f"checked diagnoses are used.\n\n{fmt}"
        )
        lines.append('answer: your own final answer in the output format above (solve="yes" '
                     "only; last line)")
    fields = "\n".join(lines)
    task = f"""## Your task
Reply with one block per sample above, then one shared block, in this format (plain text, no JSON):
<sample id="ID">
{fields}
</sample>
<shared>
rule: the one instruction to the target model that fixes what the failures have in common, with no values from any sample
</shared>"""
    parts = [
        Part(text=head),
        *tools_part(tools),
        Part(text="## Failures", items=[c.block(c.sample_id in blind) for c in failures],
             keys=[c.sample_id for c in failures], keep=keep_failures, rank=2, name=FAILURES),
    ]
    if successes:
        parts.append(Part(text="## Solved samples", items=[c.block(False) for c in successes],
                          keys=[c.sample_id for c in successes], rank=1, name=SOLVED))
    parts.append(Part(text=task))
    return fit(parts, budget)


_BLOCK = re.compile(
    r"<sample\b[^>]*?\bid\s*=\s*[\"']?([^\"'>\s]+)[\"']?[^>]*>(.*?)(?=</sample\s*>|<sample\b|\Z)",
    re.S | re.I,
)
_FIELD = re.compile(r"^[ \t>*-]*(wrong|rule|worked|answer)\**[ \t]*:[ \t]*\**[ \t]*", re.M | re.I)


_SHARED = re.compile(r"<shared\s*>(.*?)(?=</shared\s*>|<sample\b|\Z)", re.S | re.I)


def _fields(body: str) -> dict[str, str]:
    """The labelled lines of one block: the first non-empty value of each label. Notes are one
    line of at most NOTE_CHARS; the answer is kept whole (a program, a worked solution)."""
    fields: dict[str, str] = {}
    labels = list(_FIELD.finditer(body))
    for i, label in enumerate(labels):
        end = labels[i + 1].start() if i + 1 < len(labels) else len(body)
        name = label.group(1).lower()
        value = body[label.end():end].strip()
        if name != "answer":
            value = " ".join(value.split())
            value = value if len(value) <= NOTE_CHARS else value[: NOTE_CHARS - 1] + "…"
        if value and name not in fields:
            fields[name] = value
    return fields


def parse_shared_rule(reply: str) -> str:
    """The rule of the reply's first `<shared>` block that has one ("" if none)."""
    return next((rule for m in _SHARED.finditer(reply) if (rule := _fields(m.group(1)).get("rule"))),
                "")


def parse_preparation(reply: str) -> Mapping[str, Mapping[str, str]]:
    """{sample id: {field: text}} from the reply; the first block of an id wins, unknown labels
    and text outside the labelled lines are ignored (`_fields`)."""
    found: dict[str, dict[str, str]] = {}
    for match in _BLOCK.finditer(reply):
        sample_id, body = match.group(1), match.group(2)
        if sample_id in found:
            continue
        if fields := _fields(body):
            found[sample_id] = fields
    return found
