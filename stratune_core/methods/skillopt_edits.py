"""SkillOpt's edits: reading scored proposals, the cosine schedule of how many are applied per
step, the failure-first merge, applying the selected ones outside the protected guidance
section, and the strict validation gate."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from attrs import frozen

from llm_cache.records import CallKind
from stratune_core.methods.executions import execute, scored
from stratune_core.methods.skillopt_guidance import apply_outside_guidance
from stratune_core.methods.skillopt_prompts import (
    FINAL_MERGE_SYSTEM,
    MERGE_SYSTEM,
    final_merge_prompt,
    merge_prompt,
)
from stratune_core.methods.splits import chunks
from stratune_core.methods.state import MethodState
from stratune_core.operators.patches import Edit, PatchError, parse_candidates
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
    """Edits applied at `step` (1-based) of `total`, as the released trainer's cosine scheduler
    computes them (microsoft/SkillOpt, `skillopt/optimizer/scheduler.py`): the half-cosine from
    `start` to `end` evaluated at step/total, so the first step already sits one interval down
    and the last gives `end`; Python's rounding (half to even), never below `end`. Over 4 steps
    with 4 -> 2: 4, 3, 2, 2."""
    if total <= 1:
        return start
    t = min(step, total) / total
    return max(end, round(end + 0.5 * (start - end) * (1 + math.cos(math.pi * t))))


Group = tuple[Proposal, ...]  # one analyst's (or one merge's) proposals: the released "patch"


def merge(env: Env, skill: str, failures: Sequence[Group], successes: Sequence[Group],
          group: int, meta: str = "") -> Group:
    """The released aggregate stage (`skillopt/gradient/aggregate.py`): failure groups and
    success groups merged apart, each level by level in batches of `group` (a batch of one
    passes as it is) until one is left; then, when both gave proposals, one final merge that
    puts the failures' first. A merge reply without a readable proposal keeps its batch's
    proposals, concatenated; so does a final merge, failures first."""
    failed = _merge_levels(env, skill, failures, group, True, meta)
    succeeded = _merge_levels(env, skill, successes, group, False, meta)
    if not failed or not succeeded:
        return failed or succeeded
    reply = ask(env, [optimizer_request(env, final_merge_prompt(
        skill, [p.text for p in failed], [p.text for p in succeeded], meta),
        kind=CallKind.SKILL_UPDATE, system=FINAL_MERGE_SYSTEM)])[0]
    return proposals(reply) or (*failed, *succeeded)


def _merge_levels(env: Env, skill: str, groups: Sequence[Group], size: int, failures: bool,
                  meta: str) -> Group:
    current = [g for g in groups if g]
    while len(current) > 1:
        batches = chunks(current, max(2, size))
        asked = [b for b in batches if len(b) > 1]
        replies = iter(ask(env, [optimizer_request(
            env, merge_prompt(skill, [p.text for g in b for p in g], failures, meta),
            kind=CallKind.SKILL_UPDATE, system=MERGE_SYSTEM) for b in asked]))
        current = [b[0] if len(b) == 1 else
                   (proposals(next(replies)) or tuple(p for g in b for p in g))
                   for b in batches]
    return current[0] if current else ()


def apply_selected(skill: str, chosen: Sequence[Proposal]) -> tuple[str, int]:
    """The skill with each chosen edit applied in rank order outside the guidance section,
    skipping edits that no longer apply or whose target lies in the section; (text, applied)."""
    text, applied = skill, 0
    for p in chosen:
        try:
            text = apply_outside_guidance(text, p.edit)
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
