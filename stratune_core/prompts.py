"""Every optimizer prompt, as templates over the optimization state.

No clock, run id or random salt ever enters a prompt: the same state gives the same request
bytes, which is what makes the content-hashed cache a faithful replay of a run. The only
deliberate variation is I3's draw index ("draft k of K"), which is also in the cache key.
"""

from __future__ import annotations

from collections.abc import Sequence

from stratune_core.enums import Form, Strategy, Verdict
from stratune_core.feedback import Feedback
from stratune_core.forms import FORM_DESCRIPTIONS, STRATEGY_DESCRIPTIONS
from stratune_core.history import History, HistoryEntry
from stratune_core.refinement import Refinement

OPTIMIZER_SYSTEM = (
    "You improve a reusable skill: the instruction text a target model follows when it solves a "
    "task. Every change you propose is tested on training samples and rejected if it breaks "
    "samples the skill already solves, so propose general, precise changes, never memorised "
    "answers."
)

SELECTION_SYSTEM = "You are the strategy controller of a skill-optimization loop. Reply with JSON only."

PATCH_FORMAT = """Write each candidate in exactly this format (plain text, no JSON):
<candidate>
<form>{form}</form>
<theme>a few words naming the change</theme>
<sources>ids of offered examples you copied, comma-separated (F2 only)</sources>
{body}
</candidate>

Edit operations (1 to {max_edits} per candidate, applied in order):
<edit op="append">new text</edit>
<edit op="replace"><old>text that occurs exactly once in the skill</old><new>its replacement</new></edit>
<edit op="insert_after"><anchor>text that occurs exactly once</anchor><new>text to insert after that line</new></edit>
A full rewrite (form F4 only) replaces all edits:
<rewrite>
the complete new skill
</rewrite>"""
_EXAMPLE_EDIT = '<edit op="append">\ntext added at the end of the skill\n</edit>'
_EXAMPLE_REWRITE = "<rewrite>\nthe complete new skill\n</rewrite>"


def patch_format(forms: Sequence[Form], max_edits: int) -> str:
    """`PATCH_FORMAT` with its example in a requested form (the first one; the only one when a
    single form is requested, so a model that copies the example copies the right label)."""
    form = forms[0] if forms else Form.F1
    body = _EXAMPLE_REWRITE if form is Form.F4 else _EXAMPLE_EDIT
    return PATCH_FORMAT.format(form=form.value, body=body, max_edits=max_edits)


def _fmt_gain(value: float | None) -> str:
    return "n/a" if value is None else f"{value:+.3f}"


def render_feedback(fb: Feedback, *, with_examples: bool) -> str:
    lines = [
        f"The current skill solved {fb.n_solved} of {len(fb.batch_ids)} samples of this round's "
        f"batch (mean score {fb.mean_score:.3f}).",
    ]
    if fb.failures:
        lines.append(f"Failures ({len(fb.failures)} shown):")
        for f in fb.failures:
            lines.append(
                f"- [{f.sample_id}] input: {f.input}\n  target output: {f.output or '(empty)'}\n"
                f"  expected: {f.expected}\n  problem: {f.summary or 'wrong answer'} "
                f"(score {f.score:.2f})"
            )
    else:
        lines.append("No failures on this batch.")
    if with_examples and fb.examples:
        lines.append(
            "Solved samples you may copy verbatim as worked examples (F2), one line each:"
        )
        lines.extend(e.line for e in fb.examples)
    return "\n".join(lines)


def _summarise(entries: Sequence[HistoryEntry]) -> str:
    if not entries:
        return "no attempts yet"
    accepted = sum(e.verdict is Verdict.ACCEPTED for e in entries)
    saved = sum(e.verdict is Verdict.SAVED for e in entries)
    gains = [e.screen_gain for e in entries if e.screen_gain is not None]
    regress = [e.regressions for e in entries if e.regressions is not None]
    held = [e.held for e in entries if e.held is not None]
    mean_gain = sum(gains) / len(gains) if gains else None
    parts = [
        f"{len(entries)} candidates, {accepted} accepted, {saved} saved",
        f"mean screening gain {_fmt_gain(mean_gain)}",
        f"regressions {sum(regress)}" if regress else "regressions n/a",
    ]
    if held:
        parts.append(f"screening gain held in validation {sum(held)}/{len(held)}")
    last = entries[-1]
    parts.append(f"last: round {last.round + 1} {last.verdict.value}")
    return "; ".join(parts)


def render_history(history: History) -> tuple[str, str]:
    """(strategy history, form history) blocks of the selection prompt."""
    by_strategy = "\n".join(
        f"- {s.value}: {_summarise(history.by_strategy(s))}" for s in Strategy
    )
    by_form = "\n".join(f"- {f.value}: {_summarise(history.by_form(f))}" for f in Form)
    return by_strategy, by_form


def render_refinement(ref: Refinement, intermediate_text: str | None) -> str:
    if not ref.started:
        return "I2 has not started; choosing I2 starts it from the current skill."
    text = f"I2 has made {ref.steps} refinement step(s)."
    if ref.reference_score is not None:
        text += f" The intermediate skill scores {ref.reference_score:.3f} on the ranking subset."
    if intermediate_text is not None:
        text += f"\nIntermediate skill:\n<intermediate>\n{intermediate_text}\n</intermediate>"
    return text


def selection_prompt(
    *,
    feedback: Feedback,
    history: History | None,
    refinement: Refinement,
    intermediate_text: str | None,
    strategies: Sequence[Strategy],
    forms: Sequence[Form],
) -> str:
    if history is None:
        strategy_block = form_block = "Withheld in this run."
    else:
        strategy_block, form_block = render_history(history)
    strategy_menu = "\n".join(f"- {s.value}: {STRATEGY_DESCRIPTIONS[s]}" for s in strategies)
    form_menu = "\n".join(f"- {f.value}: {FORM_DESCRIPTIONS[f]}" for f in forms)
    # Named as a list, not as a template: a weak optimizer copies "I1|I2|I3" back verbatim.
    labels = ", ".join(f'"{s.value}"' for s in strategies)
    form_labels = ", ".join(f'"{f.value}"' for f in forms)
    return f"""You are optimizing a reusable skill for a target model. Choose a search strategy and, where applicable, a revision form for the next iteration using the execution feedback and history below.

## Execution feedback
{render_feedback(feedback, with_examples=False)}
Solved samples available as worked examples: {len(feedback.examples)}.

## Strategy history
{strategy_block}

## Form history
{form_block}

## Refinement progress
{render_refinement(refinement, intermediate_text)}

## Search strategies
{strategy_menu}

## Revision forms
{form_menu}

## Your task
Choose a search strategy that addresses the current failures, and the revision form where the strategy takes one (I1 chooses its forms while writing candidates: use null), taking previous evaluation results into account. Briefly explain how the feedback and history support your choice.
Reply with only a JSON object with three keys: "strategy" (exactly one of {labels}), "form" (exactly one of {form_labels}, or null) and "why" (one sentence)."""


def repair_prompt(previous_reply: str, expected: str) -> str:
    return (
        "Your previous reply could not be used. Reply again with ONLY "
        f"{expected}, nothing else.\n\nYour previous reply was:\n{previous_reply[:4000]}"
    )


def generation_prompt(
    *,
    skill_text: str,
    feedback: Feedback,
    forms: Sequence[Form],
    n_candidates: int,
    max_edits: int,
    intermediate: bool = False,
    draw: tuple[int, int] | None = None,
) -> str:
    """I1 (several forms allowed), I2 (one form on s~) and I3 (one form, draw k of K)."""
    which = "intermediate skill" if intermediate else "current skill"
    with_examples = Form.F2 in forms
    form_menu = "\n".join(f"- {f.value}: {FORM_DESCRIPTIONS[f]}" for f in forms)
    if len(forms) == 1:
        ask = f"Write exactly 1 candidate in form {forms[0].value} only."
    elif n_candidates == 1:
        ask = "Write exactly 1 candidate, in the form that best fits the failures."
    else:
        ask = (
            f"Write exactly {n_candidates} candidates, each in a different form that fits the "
            "failures; each is applied on its own to the skill."
        )
    draw_note = ""
    if draw is not None:
        k, total = draw
        draw_note = (
            f"\nThis is draft {k + 1} of {total}, written independently of the others: take a "
            "different angle than the obvious one."
        )
    rules = [
        "Keep the skill's output-format instructions exactly as they are.",
        "Compare each target output with its expected answer (the 'problem' lines say what went "
        "wrong) and fix the cause the failures share; do not write answers to specific samples.",
        "Old and anchor texts must be copied exactly from the skill.",
    ]
    if with_examples:
        rules.append(
            "F2 examples must be copied verbatim, one line each, from the solved samples listed "
            "above; list their ids in <sources>."
        )
    rule_text = "\n".join(f"- {r}" for r in rules)
    return f"""## The {which}
<skill>
{skill_text}
</skill>

## Execution feedback
{render_feedback(feedback, with_examples=with_examples)}

## Revision forms
{form_menu}

## Your task
{ask}{draw_note}
{rule_text}

{patch_format(forms, max_edits)}"""
