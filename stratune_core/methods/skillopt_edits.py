"""SkillOpt's edits: reading scored proposals, the cosine schedule of how many are applied per
step, merging in groups, applying the selected ones, and the strict validation gate."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from attrs import frozen

from llm_cache.records import CallKind
from stratune_core.methods.executions import execute, scored
from stratune_core.methods.skillopt_prompts import MERGE_SYSTEM, merge_prompt
from stratune_core.methods.splits import chunks
from stratune_core.methods.state import MethodState
from stratune_core.operators.patches import Edit, Patch, PatchError, apply_patch, parse_candidates
from stratune_core.prompts.optimizer import ask, optimizer_request
from stratune_core.records.method_events import UpdateDecided
from stratune_core.records.purposes import MethodPurpose, UpdateVerdict
from stratune_core.state.context import Env
from stratune_core.state.events import Event

_PROPOSAL = re.compile(r'<proposal\s+score\s*=\s*["\']?([0-9.]+)["\']?\s*>(.*?)</proposal>', re.S)


@frozen(kw_only=True)
class Proposal:
    score: float
    edit: Edit
    text: str  # as the optimizer wrote it, for the merge prompt


def proposals(reply: str) -> tuple[Proposal, ...]:
    """The scored proposals holding one readable edit; others are dropped."""
    out = []
    for raw_score, body in _PROPOSAL.findall(reply):
        try:
            score = min(1.0, max(0.0, float(raw_score)))
        except ValueError:
            continue
        found = parse_candidates(body)
        if found and found[0].patch is not None and len(found[0].patch.edits) == 1:
            out.append(Proposal(score=score, edit=found[0].patch.edits[0],
                                text=f'<proposal score="{score:g}">{body.strip()}</proposal>'))
    return tuple(out)


def edit_limit(start: int, end: int, step: int, total: int) -> int:
    """Edits applied at `step` of `total`: `start` decaying to `end` on a cosine."""
    if total <= 1:
        return start
    t = min(step, total - 1) / (total - 1)
    return math.floor(end + (start - end) * (1 + math.cos(math.pi * t)) / 2 + 0.5)


def merge(env: Env, skill: str, found: Sequence[Proposal], group: int) -> tuple[Proposal, ...]:
    """Merged group by group, level by level, until one group's merge is left; a level that
    does not shorten the list ends the merging."""
    current = tuple(found)
    while len(current) > 1:
        groups = chunks(current, group)
        replies = ask(env, [optimizer_request(env, merge_prompt(skill, [p.text for p in g]),
                                              kind=CallKind.SKILL_UPDATE, system=MERGE_SYSTEM)
                            for g in groups])
        merged = tuple(p for reply in replies for p in proposals(reply))
        if not merged or (len(merged) >= len(current) and len(groups) > 1):
            break
        current = merged
        if len(groups) == 1:
            break
    return current


def apply_selected(skill: str, chosen: Sequence[Proposal]) -> tuple[str, int]:
    """The skill with each chosen edit applied in rank order, skipping edits that no longer
    apply; (text, edits applied)."""
    text, applied = skill, 0
    for p in chosen:
        try:
            text = apply_patch(text, Patch(edits=(p.edit,)))
        except PatchError:
            continue
        applied += 1
    return text, applied


def top(found: Sequence[Proposal], k: int) -> tuple[Proposal, ...]:
    """The `k` best-scored proposals (ties in proposal order)."""
    ranked = sorted(range(len(found)), key=lambda i: (-found[i].score, i))
    return tuple(found[i] for i in ranked[:k])


def gate(state: MethodState, env: Env, parent: str, text: str, val: Sequence[str],
         reference: float, detail: str = "") -> tuple[MethodState, tuple[Event, ...], float]:
    """The candidate `text` on the selection split, accepted only if strictly better than the
    current skill; returns the current skill's score afterwards."""
    out: list[Event] = []
    if text == state.text(parent):
        return state, (UpdateDecided(round=state.round, parent_id=parent, candidate_id=None,
                                     verdict=UpdateVerdict.UNCHANGED, reference_score=reference,
                                     detail=detail),), reference
    state, candidate, added = state.add_skill(text, parent)
    out.extend(added)
    state, paid, runs = execute(state, env, candidate, val, purpose=MethodPurpose.VALIDATION)
    out.extend(paid)
    if runs is None:
        out.append(UpdateDecided(round=state.round, parent_id=parent, candidate_id=candidate,
                                 verdict=UpdateVerdict.UNAFFORDABLE, reference_score=reference,
                                 detail=detail))
        return state, tuple(out), reference
    score, seen = scored(state, env, candidate, val, purpose=MethodPurpose.VALIDATION)
    kept = score > reference + 1e-12
    out += [seen, UpdateDecided(round=state.round, parent_id=parent, candidate_id=candidate,
                                verdict=UpdateVerdict.KEPT if kept else UpdateVerdict.REVERTED,
                                score=score, reference_score=reference, detail=detail)]
    if kept:
        state = state.accept(candidate)
    return state, tuple(out), score if kept else reference
