"""Every optimizer prompt, as templates over the optimization state.

No clock, run id or random salt ever enters a prompt: the same state gives the same request
bytes, which is what makes the content-hashed cache a faithful replay of a run. The only
deliberate variation is I3's draw index ("draft k of K"), which is also in the cache key.

Each prompt is built to a token budget (`prompts/budget.py`): over it, a prompt gives up solved
examples first, then successful trajectories, then older history rows, then failures beyond
the first few, and says so in its first line. The feedback-preparation prompt is in
`prompts/prep_prompt.py`; the pieces of E_t and H_t in `prompts/feedback.py` and
`prompts/history.py`.
"""

from __future__ import annotations

from collections.abc import Sequence

from stratune_core.feedback.execution import Feedback
from stratune_core.operators.forms import STRATEGY_DESCRIPTIONS, OfferedExample
from stratune_core.operators.refinement import Refinement
from stratune_core.prompts.budget import Part, fit
from stratune_core.prompts.feedback import (
    RANK_FORM_ROWS,
    RANK_HISTORY,
    RANK_INTERMEDIATE,
    generation_feedback,
    selection_feedback,
)
from stratune_core.prompts.history import (
    attempt_rows,
    case_rows,
    form_rows,
    form_totals,
    recent_results,
    split_form_totals,
    strategy_totals,
)
from stratune_core.prompts.prep_prompt import Preparation
from stratune_core.records.enums import Form, Strategy
from stratune_core.records.form_spec import form_spec
from stratune_core.records.parts import Placeholders, marker, part_names
from stratune_core.state.history import History

# The version of every optimizer prompt's wording and layout, written into each run's manifest.
# A recorded run's model calls can be replayed only by the prompts that made them: change this
# whenever a prompt's bytes change for the same state ("1": the first prompts; "2": the
# selection prompt with its reply schema, feedback preparation and token budgets; "3": the patch-format
# example in the requested form; "4": every attempt in the paper profile's strategy and form
# histories, newest first, the forms chosen while writing apart; "5": failures diagnosed with
# their expected answers, only the task's answer markup held fixed, history rows without the
# selection's earlier reasons; "6": an F2 request's patch-format example made of an offered
# solved sample's line, and the solved samples of the failures' strata offered first).
PROMPT_VERSION = "6"

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
<sources>{sources}</sources>
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
_SOURCES = "ids of offered examples you copied, comma-separated (F2 only)"
EXAMPLES_HEADING = "Worked examples:"


def patch_format(forms: Sequence[Form], max_edits: int,
                 example: OfferedExample | None = None) -> str:
    """`PATCH_FORMAT` with its example in a requested form (the first one; the only one when a
    single form is requested, so a model that copies the example copies the right label).

    With F2 first and a solved sample offered, the example is an F2 edit made of that sample's
    line: a model that copies a placeholder instead of filling it in (every F2 draft of the
    recorded runs pasted "text added at the end of the skill" or a rule there) then still writes
    an example copied from an offered sample, which is what F2 checks."""
    form = forms[0] if forms else Form.F1
    sources, body = _SOURCES, _EXAMPLE_EDIT
    if form is Form.F4:
        body = _EXAMPLE_REWRITE
    elif form is Form.F2 and example is not None:
        sources = example.sample_id
        body = f'<edit op="append">\n{EXAMPLES_HEADING}\n{example.line}\n</edit>'
    return PATCH_FORMAT.format(form=form.value, sources=sources, body=body, max_edits=max_edits)


def markup_rule(markup: Sequence[str]) -> str:
    """What a revision must leave of the output format: only the markup the task's scorer parses,
    never the rest (how much to say, in what shape), which the failures may show to be wrong."""
    shape = ("The expected answers show the form an answer must take: where the target's outputs "
             "differ from them in form (extra words, another shape), a rule on the output format "
             "is a fix like any other.")
    if not markup:
        return shape
    named = ", ".join(f"`{m}`" for m in markup)
    return (f"Where the skill asks for {named}, keep asking for it: the task's scorer reads the "
            f"answer from that markup. {shape}")


def parts_rule(skill_text: str) -> str | None:
    """For a skill of several parts (`records.parts`), what a revision must keep of them; None
    for a one-part skill, whose prompts stay as they were."""
    names = part_names(skill_text)
    if not names:
        return None
    listed = ", ".join(f"`{n}`" for n in names)
    return (f"The skill has {len(names)} parts ({listed}), each opened by its own "
            f"`{marker('NAME')}` line and used in a different place: keep every such line as it "
            "is and where it is, revise the text under it, and put each rule in the part it "
            "applies to.")


def placeholders_rule(placeholders: Placeholders) -> str | None:
    """What a revision must keep of a template (`TaskInfo.placeholders`); None for a skill
    without placeholders, whose prompts stay as they were."""
    named = [f"`{p}`" + (f" (part `{name}`)" if name else "")
             for name, pieces in placeholders for p in pieces]
    if not named:
        return None
    return (f"The skill is a template: {', '.join(named)} {'is' if len(named) == 1 else 'are'} "
            "filled in with each input. Keep every placeholder exactly as written, in its part.")


def render_refinement(ref: Refinement) -> str:
    if not ref.started:
        return "I2 has not started; choosing I2 starts it from the current skill."
    text = f"I2 has made {ref.steps} refinement step(s)."
    if ref.reference_score is not None:
        text += f" The intermediate skill scores {ref.reference_score:.3f} on the ranking subset."
    if ref.window:
        text += (f" {len(ref.window)} draft(s) wait in the submission window; the best are "
                 "submitted when it is full.")
    return text


def _history_parts(history: History | None, *, past_revisions: bool) -> list[Part]:
    if history is None:
        return [Part(text="## Strategy history\nWithheld in this run."),
                Part(text="## Form history\nWithheld in this run.")]
    if past_revisions:
        rows = case_rows(history)
        return [
            Part(
                text="## Strategy history\n" + strategy_totals(history)
                + ("\nRecent attempts (per strategy the latest accepted or saved candidate and "
                   "the latest failure; oldest first):" if rows else ""),
                items=rows, rank=RANK_HISTORY, name="older history rows", oldest_first=True,
            ),
            Part(text="## Form history\n" + form_totals(history)),
        ]
    attempts, by_form = attempt_rows(history), form_rows(history)
    return [
        Part(
            text="## Strategy history\n" + strategy_totals(history)
            + ("\nEvery attempt, newest first:" if attempts else ""),
            items=attempts, rank=RANK_HISTORY, name="older attempts",
            note_last=True,
        ),
        Part(
            text="## Form history\n" + split_form_totals(history)
            + ("\nAttempts by the form chosen with the strategy, newest first:"
               if by_form else ""),
            items=by_form, rank=RANK_FORM_ROWS, name="attempts by form", note_last=True,
        ),
    ]


def selection_prompt(
    *,
    feedback: Feedback,
    history: History | None,
    refinement: Refinement,
    intermediate_text: str | None,
    strategies: Sequence[Strategy],
    forms: Sequence[Form],
    checkable: int | None,
    budget: int,
    past_revisions: bool = False,
    blind: bool = False,
) -> str:
    """Paper Fig. 5. `checkable`: failures feedback preparation can verify (None: it is off;
    `blind`: it solves them blind, the released code's verified fixes);
    `budget`: the tokens this user turn may use (`prompt_budget.turn_budget`);
    `past_revisions`: the released code's short history (`Config.past_revisions`)."""
    strategy_menu = "\n".join(f"- {s.value}: {STRATEGY_DESCRIPTIONS[s]}" for s in strategies)
    form_menu = "\n".join(f"- {f.value}: {form_spec(f).description}" for f in forms)
    # Named as a list, not as a template: a weak optimizer copies "I1|I2|I3" back verbatim.
    labels = ", ".join(f'"{s.value}"' for s in strategies)
    form_labels = ", ".join(f'"{f.value}"' for f in forms)
    recent = recent_results(history) if history is not None else None
    intermediate = (
        [f"Intermediate skill:\n<intermediate>\n{intermediate_text}\n</intermediate>"]
        if intermediate_text is not None and refinement.started else []
    )
    parts = [
        Part(text="You are optimizing a reusable skill for a target model. Choose a search "
             "strategy and, where applicable, a revision form for the next iteration using the "
             "execution feedback and history below."),
        *selection_feedback(feedback, recent, checkable=checkable, blind=blind),
        *_history_parts(history, past_revisions=past_revisions),
        Part(text="## Refinement progress\n" + render_refinement(refinement), items=intermediate,
             rank=RANK_INTERMEDIATE, name="intermediate skill text"),
        Part(text=f"## Search strategies\n{strategy_menu}"),
        Part(text=f"## Revision forms\n{form_menu}"),
        Part(text=f"""## Your task
Choose a search strategy that addresses the current failures, and the revision form where the strategy takes one (I1 chooses its forms while writing candidates: use null), taking previous evaluation results into account. Briefly explain how the feedback and history support your choice.
Reply with only a JSON object with three keys: "strategy" (exactly one of {labels}), "form" (exactly one of {form_labels}, or null) and "why" (one sentence)."""),
    ]
    return fit(parts, budget).text


def repair_prompt(expected: str, why: str = "") -> str:
    """The user turn after an unusable reply (which is already in the conversation); `why`
    names what made it unusable, when the reader can tell."""
    said = f": {why}" if why else ""
    return (f"Your previous reply could not be used{said}. Reply again with ONLY {expected}, "
            "nothing else.")


def generation_prompt(
    *,
    skill_text: str,
    feedback: Feedback,
    forms: Sequence[Form],
    n_candidates: int,
    max_edits: int,
    budget: int,
    preparation: Preparation | None = None,
    intermediate: bool = False,
    draw: tuple[int, int] | None = None,
    markup: Sequence[str] = (),
    placeholders: Placeholders = (),
) -> str:
    """I1 (several forms allowed), I2 (one form on s~) and I3 (one form, draw k of K); `markup`:
    the answer markup the task's scorer parses, `placeholders` a template's (`TaskInfo`)."""
    which = "intermediate skill" if intermediate else "current skill"
    with_examples = any(form_spec(f).needs_examples for f in forms)
    form_menu = "\n".join(f"- {f.value}: {form_spec(f).description}" for f in forms)
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
        "Compare each target output with its expected answer (the 'problem' lines say what went "
        "wrong) and fix the cause the failures share; do not write answers to specific samples.",
        markup_rule(markup),
        "Old and anchor texts must be copied exactly from the skill.",
    ]
    rules += [r for r in (parts_rule(skill_text), placeholders_rule(placeholders)) if r]
    if with_examples:
        rules.append(
            "F2 examples must be copied verbatim, one line each, from the solved samples listed "
            "above; list their ids in <sources>."
        )
    rule_text = "\n".join(f"- {r}" for r in rules)
    # An F2-only prompt without examples could not be answered: it keeps two at any budget.
    keep_examples = 2 if tuple(forms) == (Form.F2,) else 0
    parts = [
        Part(text=f"## The {which}\n<skill>\n{skill_text}\n</skill>"),
        *generation_feedback(feedback, preparation, with_examples=with_examples,
                             keep_examples=keep_examples),
        Part(text=f"## Revision forms\n{form_menu}"),
        Part(text=f"## Your task\n{ask}{draw_note}\n{rule_text}"),
        # the F2 format example copies the first offered sample, the one a shortened prompt keeps
        Part(text=patch_format(forms, max_edits,
                               feedback.examples[0] if with_examples and feedback.examples
                               else None)),
    ]
    return fit(parts, budget).text
