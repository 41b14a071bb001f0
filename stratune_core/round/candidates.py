"""From an optimizer's raw candidate to a registered candidate skill, checked before any budget
is spent: the form (the requested one when only one was requested), the patch applies, F2
examples are grounded in offered solved samples, the parts of a multi-part skill and the task's
template placeholders are kept, F4 keeps the task's answer markup. A failed check is recorded
as an invalid outcome in the history."""

from __future__ import annotations

from collections.abc import Sequence

from attrs import field, frozen

from stratune_core.feedback.execution import Feedback
from stratune_core.operators.forms import OfferedExample, check_grounding, check_markup_kept
from stratune_core.operators.patches import PatchError, RawCandidate, apply_patch, rewrite_cap
from stratune_core.records.enums import Form, Reason, Strategy, Verdict
from stratune_core.records.form_spec import form_spec
from stratune_core.records.parts import (
    Placeholders,
    check_parts_kept,
    check_placeholders_kept,
    script_problem,
)
from stratune_core.state.candidate_events import CandidateGenerated, CandidateInvalid
from stratune_core.state.context import Env
from stratune_core.state.events import Event, SkillAdded
from stratune_core.state.history import HistoryEntry
from stratune_core.state.state import State


@frozen(kw_only=True)
class Prepared:
    candidate_id: str
    form: Form
    theme: str
    draw: int
    used_examples: frozenset[str] = field(factory=frozenset)


def _invalid(
    state: State, strategy: Strategy, form: Form | None, reason: Reason, detail: str, draw: int
) -> tuple[State, tuple[Event, ...], None]:
    event = CandidateInvalid(
        round=state.round, strategy=strategy, form=form, reason=reason, detail=detail[:300], draw=draw
    )
    entry = HistoryEntry(
        round=state.round, strategy=strategy, form=form, candidate_id="", verdict=Verdict.INVALID,
        reasons=(reason,),
    )
    return state.evolve(history=state.history.add_entry(entry)), (event,), None


def resolve_form(raw: RawCandidate, forms: Sequence[Form]) -> Form | None:
    """The form a candidate is judged as. When exactly one form was requested the <form> tag
    is redundant: the candidate is taken as that form whatever its label says (a weak model
    copies the label of the format example), and its content must then meet that form's rules.
    Otherwise the label decides, and must name one of the requested forms."""
    return forms[0] if len(forms) == 1 else raw.form


@frozen(kw_only=True)
class Checked:
    """A candidate that passed every check made before budget is spent."""

    form: Form
    text: str
    used_examples: frozenset[str] = field(factory=frozenset)


@frozen(kw_only=True)
class Refused:
    reason: Reason
    detail: str


def check_candidate(
    raw: RawCandidate,
    form: Form | None,
    *,
    forms: Sequence[Form],
    parent: str,
    examples: Sequence[OfferedExample],
    max_edits: int,
    rewrite_factor: int,
    rewrite_slack_chars: int,
    markup: Sequence[str] = (),
    placeholders: Placeholders = (),
) -> Checked | Refused:
    """The checks of a candidate judged as `form` (`resolve_form`), before any budget is
    spent: it parsed, its form was requested, F4 rewrites and the others edit, the patch
    applies, a skill of several parts keeps them, F4 keeps the task's answer `markup` and F2
    adds only offered example lines; every form keeps the task's template placeholders."""
    if raw.patch is None:
        return Refused(reason=Reason.UNPARSEABLE, detail=raw.error or "no patch")
    if form is None or form not in forms:
        allowed = ", ".join(f.value for f in forms)
        got = "no form" if form is None else form.value
        return Refused(reason=Reason.INVALID_PATCH, detail=f"{got}; allowed: {allowed}")
    if raw.patch.is_rewrite != (rewrites := form_spec(form).rewrite):
        detail = f"{form.value} needs a <rewrite>" if rewrites else f"{form.value} cannot rewrite"
        return Refused(reason=Reason.INVALID_PATCH, detail=detail)
    try:
        text = apply_patch(
            parent, raw.patch, max_edits=max_edits,
            rewrite_cap=rewrite_cap(parent, rewrite_factor, rewrite_slack_chars),
        )
    except PatchError as exc:
        return Refused(reason=exc.reason, detail=exc.detail)
    if (changed := check_parts_kept(parent, text)) is not None:
        return Refused(reason=Reason.PARTS_CHANGED, detail=changed)
    if (broken := script_problem(text)) is not None:
        return Refused(reason=Reason.SCRIPT_SYNTAX, detail=broken)
    if (dropped := check_placeholders_kept(text, placeholders)) is not None:
        return Refused(reason=Reason.PLACEHOLDER_DROPPED, detail=dropped)
    if form is Form.F4 and (missing := check_markup_kept(parent, text, markup)) is not None:
        return Refused(reason=Reason.FORMAT_CHANGED, detail=missing)
    used: frozenset[str] = frozenset()
    if form is Form.F2:
        grounded = check_grounding(parent, text, examples, raw.sources)
        if isinstance(grounded, str):
            return Refused(reason=Reason.UNGROUNDED_EXAMPLE, detail=grounded)
        used = frozenset(grounded)
    return Checked(form=form, text=text, used_examples=used)


def prepare_candidate(
    state: State,
    env: Env,
    raw: RawCandidate,
    *,
    strategy: Strategy,
    parent_id: str,
    forms: Sequence[Form],
    feedback: Feedback,
    draw: int = 0,
) -> tuple[State, tuple[Event, ...], Prepared | None]:
    cfg = env.config
    form = resolve_form(raw, forms)
    checked = check_candidate(
        raw, form, forms=forms, parent=state.text(parent_id), examples=feedback.examples,
        max_edits=cfg.max_edits, rewrite_factor=cfg.rewrite_factor,
        rewrite_slack_chars=cfg.rewrite_slack_chars, markup=env.answer_markup,
        placeholders=env.placeholders,
    )
    if isinstance(checked, Refused):
        return _invalid(state, strategy, form, checked.reason, checked.detail, draw)
    form, text, used = checked.form, checked.text, checked.used_examples
    state, cid, is_new = state.with_skill(text, parent_id)
    if not is_new:
        return _invalid(state, strategy, form, Reason.DUPLICATE, f"skill {cid} was seen before", draw)
    events: tuple[Event, ...] = (
        SkillAdded(skill_id=cid, text=text, parent_id=parent_id),
        CandidateGenerated(
            round=state.round,
            candidate_id=cid,
            parent_id=parent_id,
            strategy=strategy,
            form=form,
            theme=raw.theme[:120],
            draw=draw,
            sources=tuple(sorted(used)),
        ),
    )
    return state, events, Prepared(candidate_id=cid, form=form, theme=raw.theme[:120], draw=draw, used_examples=used)
