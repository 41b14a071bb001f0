"""Trace2Skill, combined variant (paper App. "Baseline Settings").

1. The initial skill runs on the evolution samples (all of train, or as many as leave room to
   score every consolidated skill on them too: m = min(n, B / (1 + runs))).
2. One analyst call per trajectory, successes and failures alike, extracts lessons.
3. Each consolidation seed (41, 42, 43) shuffles the records (one per trajectory that gave
   lessons) and groups them in that order, a small remainder dealt over the first groups; each
   group is merged into one record, level by level, until one record is left. A merge that
   gives no lessons keeps its group's records; records still left after the last level get one
   forced merge (or, if that fails, the first stands). A last call writes the skill from the
   initial skill and that record.
4. Every consolidated skill runs on the evolution samples; the final skill is the best of them
   unless all score below the initial skill, which is then kept.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from functools import partial

from llm_cache.records import CallKind
from stratune_core.config.knobs import Config
from stratune_core.methods import trace2skill_events
from stratune_core.methods.entry import MethodEntry, MethodEstimate
from stratune_core.methods.executions import execute, scored
from stratune_core.methods.finish import finish
from stratune_core.methods.replies import all_blocks, last_block
from stratune_core.methods.splits import balanced_chunks, epoch_order, seeded_order
from stratune_core.methods.state import MethodState, start
from stratune_core.methods.trace2skill_events import ConsolidationDone, LessonsExtracted
from stratune_core.methods.trace2skill_prompts import (
    ANALYST_SYSTEM,
    LESSON_TAG,
    MERGE_SYSTEM,
    PROMPT_VERSION,
    SKILL_TAG,
    WRITE_SYSTEM,
    analyst_prompt,
    merge_prompt,
    write_prompt,
)
from stratune_core.methods.trajectories import render
from stratune_core.prompts.optimizer import ask, optimizer_request
from stratune_core.records.enums import StopReason
from stratune_core.records.llm import LLM
from stratune_core.records.method_events import FinalChosen
from stratune_core.records.method_spec import Method, Trace2SkillMethod
from stratune_core.records.purposes import MethodPurpose
from stratune_core.records.task import Task
from stratune_core.state.context import Env
from stratune_core.state.events import Event

Step = tuple[MethodState, tuple[Event, ...]]


def iterate(spec: Trace2SkillMethod, config: Config, task: Task, llm: LLM) -> Iterator[Step]:
    env = Env.build(config, task, llm)
    state, opening = start(spec, config, task)
    initial = state.current_id
    m = min(len(env.train_ids), state.budget.limit // (1 + len(spec.seeds)))
    evolution = epoch_order(env.train_ids, config.seed, 0)[:m]
    state, paid, runs = execute(state, env, initial, evolution,
                                purpose=MethodPurpose.TRAJECTORIES)
    if not runs:
        yield state, (*opening, *paid)
        state, done = finish(state, initial, StopReason.BUDGET)
        yield state, done
        return
    records, extracted = _analyse(state, env, initial, evolution)
    yield state, (*opening, *paid, *extracted)
    candidates: list[str] = []
    for run_index, seed in enumerate(spec.seeds):
        state = state.evolve(round=run_index)
        state, events, candidate = _consolidate(state, env, spec, records, seed)
        if candidate is not None and candidate not in candidates and candidate != initial:
            candidates.append(candidate)
        yield state, events
    base, seen = scored(state, env, initial, evolution, purpose=MethodPurpose.TRAJECTORIES)
    scores, events = [base], [seen]
    ids = [initial]
    for candidate in candidates:
        state, paid, runs = execute(state, env, candidate, evolution,
                                    purpose=MethodPurpose.SELECTION)
        events.extend(paid)
        if runs is None:
            continue
        score, seen = scored(state, env, candidate, evolution, purpose=MethodPurpose.SELECTION)
        events.append(seen)
        ids.append(candidate)
        scores.append(score)
    best = max(range(1, len(ids)), key=lambda i: (scores[i], -i), default=0)
    final = ids[best] if best and scores[best] >= scores[0] - 1e-12 else initial
    if final != initial:
        state = state.accept(final)
    events.append(FinalChosen(skill_ids=ids, scores=scores, final_id=final))
    reason = StopReason.COMPLETED if len(ids) == len(candidates) + 1 else StopReason.BUDGET
    state, done = finish(state, final, reason)
    yield state, (*events, *done)


Record = tuple[str, ...]  # the lessons of one trajectory, or of one merge


def _analyse(state: MethodState, env: Env, skill_id: str,
             sample_ids: Sequence[str]) -> tuple[tuple[Record, ...], tuple[Event, ...]]:
    """One record per trajectory that gave lessons, in sample order, and one event per
    trajectory."""
    executions = [state.ledger.get(skill_id, x) for x in sample_ids]
    skill = state.text(skill_id)
    replies = ask(env, [optimizer_request(env, analyst_prompt(skill, render(env, e), e.solved),
                                          kind=CallKind.REFLECTION, system=ANALYST_SYSTEM)
                        for e in executions if e is not None])
    records: list[Record] = []
    events: list[Event] = []
    for e, reply in zip([e for e in executions if e is not None], replies, strict=True):
        lessons = all_blocks(reply, LESSON_TAG)
        if lessons:
            records.append(lessons)
        events.append(LessonsExtracted(sample_id=e.sample_id, solved=e.solved,
                                       lessons=len(lessons)))
    return tuple(records), tuple(events)


def _consolidate(state: MethodState, env: Env, spec: Trace2SkillMethod,
                 records: Sequence[Record], seed: int
                 ) -> tuple[MethodState, tuple[Event, ...], str | None]:
    """One consolidation run: the records in the seed's order, merged group by group, level by
    level, into one record, which is then written into a skill."""
    level = list(seeded_order(records, seed))
    merges, levels = 0, 0
    while len(level) > 1 and levels < spec.merge_levels:
        levels += 1
        groups = balanced_chunks(level, spec.group_size)
        level = [record for group, merged in zip(groups, _merge(env, groups), strict=True)
                 for record in ((merged,) if merged else group)]
        merges += len(groups)
    if len(level) > 1:  # the level cap reached: one forced merge of what is left
        forced = _merge(env, (tuple(level),))[0]
        merges += 1
        level = [forced or level[0]]
    done = partial(ConsolidationDone, seed=seed, groups=merges, levels=levels)
    if not level:
        return state, (done(candidate_id=None, detail="no lessons to consolidate"),), None
    lessons = level[0]
    skill = state.text(state.current_id)
    reply = ask(env, [optimizer_request(env, write_prompt(skill, lessons),
                                        kind=CallKind.SKILL_UPDATE, system=WRITE_SYSTEM)])[0]
    text = last_block(reply, SKILL_TAG)
    if text is None:
        return state, (done(candidate_id=None, lessons=len(lessons),
                            detail=f"no <{SKILL_TAG}> block in the reply"),), None
    state, sid, added = state.add_skill(text, state.current_id)
    return state, (*added, done(candidate_id=sid, lessons=len(lessons))), sid


def _merge(env: Env, groups: Sequence[Sequence[Record]]) -> tuple[Record, ...]:
    """Each group's merged record; empty where the reply held no lesson."""
    replies = ask(env, [optimizer_request(env, merge_prompt(group), kind=CallKind.SKILL_UPDATE,
                                          system=MERGE_SYSTEM) for group in groups])
    return tuple(all_blocks(reply, LESSON_TAG) for reply in replies)


def estimate(spec: Trace2SkillMethod, n_train: int, budget: int) -> MethodEstimate:
    """A trajectory per evolution sample, each assumed to teach a lesson; merges by level."""
    m = min(n_train, budget // (1 + len(spec.seeds)))
    records, merges, levels = m, 0, 0
    while records > 1 and levels < spec.merge_levels:
        levels += 1
        records = len(balanced_chunks(range(records), spec.group_size))
        merges += records
    merges += records > 1  # the forced merge after the last level
    return MethodEstimate(target_executions=m * (1 + len(spec.seeds)),
                          optimizer_calls=m + len(spec.seeds) * (merges + 1),
                          steps=len(spec.seeds))


ENTRY = MethodEntry(
    method=Method.TRACE2SKILL, spec=Trace2SkillMethod, label="Trace2Skill", iterate=iterate,
    prompt_version=PROMPT_VERSION, estimate=estimate,
    minimum_budget=lambda spec, n: 1 + len(spec.seeds),  # one trajectory per seed and the first
    events=trace2skill_events.VIEWS,
)
