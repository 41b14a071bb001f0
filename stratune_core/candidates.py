"""From an optimizer's raw candidate to a registered candidate skill, checked before any budget
is spent: the patch applies, F2 examples are grounded in offered solved samples, F4 keeps the
output-format lines. A failed check is recorded as an invalid outcome in the history."""

from __future__ import annotations

from collections.abc import Sequence

from attrs import field, frozen

from stratune_core.context import Env
from stratune_core.enums import Form, Reason, Strategy, Verdict
from stratune_core.events import CandidateGenerated, CandidateInvalid, Event, SkillAdded
from stratune_core.feedback import Feedback
from stratune_core.forms import check_format_kept, check_grounding
from stratune_core.history import HistoryEntry
from stratune_core.patches import PatchError, RawCandidate, apply_patch, rewrite_cap
from stratune_core.state import State


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
    form = raw.form if raw.form is not None else (forms[0] if len(forms) == 1 else None)
    if raw.patch is None:
        return _invalid(state, strategy, form, Reason.UNPARSEABLE, raw.error or "no patch", draw)
    if form is None or form not in forms:
        allowed = ", ".join(f.value for f in forms)
        got = "no form" if form is None else form.value
        return _invalid(state, strategy, form, Reason.INVALID_PATCH, f"{got}; allowed: {allowed}", draw)
    if raw.patch.is_rewrite != (form is Form.F4):
        detail = "F4 needs a <rewrite>" if form is Form.F4 else f"{form.value} cannot rewrite"
        return _invalid(state, strategy, form, Reason.INVALID_PATCH, detail, draw)
    parent = state.text(parent_id)
    try:
        text = apply_patch(
            parent,
            raw.patch,
            max_edits=cfg.max_edits,
            rewrite_cap=rewrite_cap(parent, cfg.rewrite_factor, cfg.rewrite_slack_chars),
        )
    except PatchError as exc:
        return _invalid(state, strategy, form, exc.reason, exc.detail, draw)
    used: frozenset[str] = frozenset()
    if form is Form.F4:
        missing = check_format_kept(parent, text)
        if missing is not None:
            return _invalid(state, strategy, form, Reason.FORMAT_CHANGED, missing, draw)
    if form is Form.F2:
        grounded = check_grounding(parent, text, feedback.examples, raw.sources)
        if isinstance(grounded, str):
            return _invalid(state, strategy, form, Reason.UNGROUNDED_EXAMPLE, grounded, draw)
        used = frozenset(grounded)
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
