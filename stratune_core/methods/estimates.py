"""What a baseline is expected to spend, before anything runs (`stratune plan --method`).

Estimates, not a dry run: the target executions are capped by B and assume the method uses
as much of it as its procedure allows; optimizer calls follow from the steps that fit.
Iter-CoT assumes half the zero-shot answers are wrong and revisions halve them each turn;
Trace2Skill that every trajectory gives lessons.
"""

from __future__ import annotations

import math

from attrs import frozen

from stratune_core.methods.splits import balanced_chunks
from stratune_core.records.method_spec import (
    GepaMethod,
    IterCotMethod,
    MethodSpec,
    SkillOptMethod,
    TextGradMethod,
    Trace2SkillMethod,
)


@frozen(kw_only=True)
class MethodEstimate:
    target_executions: int  # counted in the budget
    optimizer_calls: int
    uncounted_target_calls: int = 0  # Iter-CoT's summaries
    steps: int = 0  # updates proposed (TextGrad, SkillOpt), revision turns (Iter-CoT)


def estimate(spec: MethodSpec, n_train: int, budget: int) -> MethodEstimate:
    if isinstance(spec, TextGradMethod):
        val = min(max(1, round(spec.validation_frac * n_train)), max(0, n_train - 1))
        steps = max(0, (budget - val) // (spec.minibatch + val)) if val else 0
        return MethodEstimate(target_executions=min(budget, val + steps * (spec.minibatch + val)),
                              optimizer_calls=steps * (2 * spec.minibatch + 1), steps=steps)
    if isinstance(spec, IterCotMethod):
        first = min(n_train, budget)
        wrong, revisions, turns = first / 2, 0.0, 0
        while wrong >= 1 and turns < spec.max_revisions:
            revisions, wrong, turns = revisions + wrong, wrong / 2, turns + 1
        counted = min(budget, first + math.ceil(revisions))
        return MethodEstimate(target_executions=counted, optimizer_calls=0,
                              uncounted_target_calls=math.ceil(first / 2 - wrong), steps=turns)
    if isinstance(spec, Trace2SkillMethod):
        m = min(n_train, budget // (1 + len(spec.seeds)))
        records, merges, levels = m, 0, 0  # a record per trajectory, all assumed to teach
        while records > 1 and levels < spec.merge_levels:
            levels += 1
            records = len(balanced_chunks(range(records), spec.group_size))
            merges += records
        merges += records > 1  # the forced merge after the last level
        return MethodEstimate(target_executions=m * (1 + len(spec.seeds)),
                              optimizer_calls=m + len(spec.seeds) * (merges + 1),
                              steps=len(spec.seeds))
    if isinstance(spec, SkillOptMethod):
        val = min(max(1, round(spec.validation_frac * n_train)), max(0, n_train - 1))
        fit = n_train - val
        batch = min(spec.batch, fit)
        planned = spec.epochs * math.ceil(fit / max(1, batch))
        steps = min(planned, max(0, (budget - val) // (batch + val))) if batch else 0
        # epoch ends from the second epoch: two rollouts, no validation (taken as written)
        slow = min(spec.epochs - 1, max(0, (budget - val - steps * (batch + val))
                                        // (2 * spec.slow_update_samples)))
        target = val + steps * (batch + val) + slow * 2 * spec.slow_update_samples
        per_step = math.ceil(batch / spec.minibatch) + 3  # analysts, two merges, the final one
        return MethodEstimate(target_executions=min(budget, target),
                              optimizer_calls=steps * per_step + 2 * slow, steps=steps)
    if isinstance(spec, GepaMethod):
        # an iteration: the parent and the proposal on a minibatch, one reflection; assumed
        # accepted one time in two, and then validated in full
        val = min(max(1, round(spec.validation_frac * n_train)), max(0, n_train - 1))
        per = 2 * spec.minibatch + math.ceil(val / 2)
        steps = max(0, (budget - val) // per) if val <= budget else 0
        return MethodEstimate(target_executions=min(budget, val + steps * per),
                              optimizer_calls=steps, steps=steps)
    raise TypeError(f"no estimate for {type(spec).__name__}")


def minimum_budget(spec: MethodSpec, n_train: int) -> int:
    """The smallest budget with which a baseline makes one step (its estimate has `steps` >= 1;
    Trace2Skill: one trajectory per seed and the first; Iter-CoT: its first answer). Below it
    the run would spend its initial validation and stop with nothing learned."""
    if isinstance(spec, IterCotMethod):
        return 1
    if isinstance(spec, Trace2SkillMethod):
        return 1 + len(spec.seeds)
    low = 1
    while low <= 64 * max(1, n_train) and estimate(spec, n_train, low).steps < 1:
        low = low * 2
    if estimate(spec, n_train, low).steps < 1:
        return low  # no budget makes a step (a training set of one sample): refused at any size
    high = low
    low = high // 2
    while low + 1 < high:  # the smallest budget that makes one step
        middle = (low + high) // 2
        if estimate(spec, n_train, middle).steps >= 1:
            high = middle
        else:
            low = middle
    return high
