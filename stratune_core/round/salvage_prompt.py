"""The donor-salvage prompt (released code only, docs/released-code.md §3.6; `round/salvage.py`).

The optimizer sees the current skill, a donor skill tried earlier in the run, the samples the
donor solves and the current skill fails (each as the target's failure under the current
skill), and why the donor was not accepted; it writes one F1 candidate of at most
`MERGE_EDITS` surgical edits that carries over what made the donor solve them. Like every
prompt it holds no clock, run id or salt, and it is built to the prompt budget (rescues beyond
the first few are dropped first).
"""

from __future__ import annotations

from collections.abc import Sequence

from stratune_core.feedback.execution import Feedback
from stratune_core.prompts.budget import KEEP_FAILURES, Part, fit
from stratune_core.prompts.feedback import failure_item
from stratune_core.prompts.templates import (
    markup_rule,
    parts_rule,
    patch_format,
    placeholders_rule,
)
from stratune_core.records.enums import Form
from stratune_core.records.parts import Placeholders
from stratune_core.state.history import HistoryEntry

MERGE_EDITS = 4


def _verdict(entry: HistoryEntry | None) -> list[Part]:
    if entry is None:
        return []
    reasons = ", ".join(r.value for r in entry.reasons) or "none recorded"
    gain = "" if entry.screen_gain is None else f", screening gain {entry.screen_gain:+.3f}"
    return [Part(text=f"## Why the donor was not kept as the current skill\n"
                      f"{entry.verdict.value} ({reasons}{gain}).")]


def salvage_prompt(*, skill_text: str, donor_text: str, rescues: Feedback,
                   donor_entry: HistoryEntry | None, budget: int,
                   markup: Sequence[str] = (), placeholders: Placeholders = ()) -> str:
    """`rescues`: the current skill's failures on the samples the donor solves; `markup`: the
    answer markup the task's scorer parses; `placeholders`: a template's (`TaskInfo`)."""
    kept = [r for r in (parts_rule(skill_text), placeholders_rule(placeholders)) if r]
    parts_line = "".join(f"\n- {rule}" for rule in kept)
    parts = [
        Part(text=f"## The current skill\n<skill>\n{skill_text}\n</skill>"),
        Part(text="## A donor skill\nAnother skill tried in this run. It solves training "
                  f"samples that the current skill fails:\n<donor>\n{donor_text}\n</donor>"),
        Part(text=f"## Samples the donor solves and the current skill fails "
                  f"({len(rescues.failures)})",
             items=[failure_item(f, None) for f in rescues.failures], keep=KEEP_FAILURES,
             name="samples"),
        *_verdict(donor_entry),
        Part(text=f"""## Your task
Merge into the current skill what makes the donor solve these samples. Write exactly 1 candidate in form {Form.F1.value} only: 1 to {MERGE_EDITS} surgical edits of the current skill, never a rewrite.
- Carry over only the donor's content that explains these samples; leave out what made it fail elsewhere.
- {markup_rule(markup)} You may remove duplicated rules.
- Old and anchor texts must be copied exactly from the current skill.{parts_line}"""),
        Part(text=patch_format((Form.F1,), MERGE_EDITS)),
    ]
    return fit(parts, budget).text
