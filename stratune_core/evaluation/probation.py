"""What a screening outcome decides (paper App. B; the released code's probation,
docs/released-code.md §4.6).

Paper: a candidate that passes the screening gates goes on to validation; one that fails them
is saved when the save rule holds with a gain below eps_s, else rejected.

Released (`Config.probation`): a screening is conclusive only when at least `ready_changes`
samples changed (wins + losses). An inconclusive screening that is not clearly worse puts the
candidate on probation: it is screened again on a second set, disjoint from the first, and the
two sets are decided together ("final"). A candidate that then passes the gates with too few
changes, or fails them with a positive gain under the save rule, is saved; the rest are rejected.
Clearly worse (rejected at once): LB(D, S) > `lb_limit`, LB(D, D+U) > `probation_reject_lb`,
more than `guard_severe_max` regressions among the random part of Q_s, no win among three or
more losses, or, with enough changes, three net losses or a gain <= -eps_s with more losses
than wins. The guardrails (`guard_severe_max`, `aux_guardrail`) also bound acceptance: a
candidate whose auxiliary metric drops a little goes on probation instead (before its last set).

Every rule consulted is a `RuleCheck` (`rules.py`): the decision returns them so that the
events say which condition failed.
"""

from __future__ import annotations

import enum

from attrs import frozen

from stratune_core.config.knobs import Config
from stratune_core.config.mechanisms import Probation
from stratune_core.evaluation.gates import Outcome
from stratune_core.evaluation.rules import (
    Condition,
    Rule,
    RuleCheck,
    Term,
    at_most,
    rule,
)
from stratune_core.evaluation.screening import save_check
from stratune_core.evaluation.wilson import wilson_lower_bound

CLEAR_NET_LOSSES = 3
GUARD_EPS = 0.01  # eps_guard = min(0.01, eps_s)


class Call(enum.Enum):
    PASS = "pass"  # on to validation
    SAVE = "save"
    BRANCH = "branch"  # saved by the branch rule
    REJECT = "reject"
    PROBATION = "probation"  # screen again on a second set


@frozen(kw_only=True)
class Guards:
    """What the released guardrails see beyond the outcome: regressions among the random part
    of Q_s, and the mean change of the task's auxiliary metric (None: the task has none)."""

    severe: int = 0
    aux: float | None = None


def ready(outcome: Outcome, config: Config) -> bool:
    """Enough changed samples for the screening to decide on its own."""
    return outcome.stats.wins + outcome.stats.losses >= config.ready_changes


def _guard(guards: Guards, config: Config) -> Condition:
    return at_most(Term.GUARD_SEVERE, guards.severe, config.guard_severe_max or 0,
                   applies=config.guard_severe_max is not None)


def _aux(term: Term, guards: Guards, config: Config, threshold: float, factor: float) -> Condition:
    limit = -factor * min(GUARD_EPS, threshold)
    value = 0.0 if guards.aux is None else guards.aux
    applies = config.aux_guardrail and guards.aux is not None
    return Condition(term=term, passed=not applies or value >= limit, value=value, limit=limit)


def worse_check(outcome: Outcome, config: Config, guards: Guards = Guards()) -> RuleCheck:
    """Holds when the candidate is NOT clearly worse; each failed condition rejects it."""
    stats, counts = outcome.stats, outcome.stats.counts
    is_ready = ready(outcome, config)
    worse = is_ready and stats.gain <= -outcome.threshold and stats.losses > stats.wins
    return rule(Rule.NOT_WORSE, (
        at_most(Term.LB_D_S, wilson_lower_bound(counts.D, counts.S, config.z), config.lb_limit),
        at_most(Term.LB_D_DU, wilson_lower_bound(counts.D, counts.D + counts.U, config.z),
                (config.probation or Probation()).reject_lb),
        _guard(guards, config),
        at_most(Term.NO_WIN_LOSSES, stats.losses if stats.wins == 0 else 0,
                CLEAR_NET_LOSSES - 1),
        Condition(term=Term.WORSE_GAIN, passed=not worse, value=stats.gain,
                  limit=-outcome.threshold),
        at_most(Term.NET_LOSSES, stats.losses - stats.wins, CLEAR_NET_LOSSES - 1,
                applies=is_ready),
    ))


def clearly_worse(outcome: Outcome, config: Config) -> bool:
    return not worse_check(outcome, config).holds


def commit_check(outcome: Outcome, config: Config, guards: Guards = Guards()) -> RuleCheck:
    """Acceptance on screening: the gates, enough changes (probation), the guardrails."""
    return rule(Rule.COMMIT, (
        at_most(Term.GATES, len(outcome.failed), 0),  # how many screening gates failed
        Condition(term=Term.READY, value=outcome.stats.wins + outcome.stats.losses,
                  limit=config.ready_changes,
                  passed=config.probation is None or ready(outcome, config)),
        _guard(guards, config),
        _aux(Term.AUX_CATASTROPHIC, guards, config, outcome.threshold, 2.0),
    ))


def screening_decision(
    outcome: Outcome, *, config: Config, branch: RuleCheck | None, final: bool,
    guards: Guards = Guards(),
) -> tuple[Call, tuple[RuleCheck, ...]]:
    """The call and the rules consulted for it, in order. `branch`: the branch rule's check
    (only when `branch_saves`); `final`: no further screening set will come (the second set of
    a probation, or none can be paid for)."""
    if outcome.stats.n == 0:
        return Call.REJECT, ()
    commit = commit_check(outcome, config, guards)
    consulted = [commit]
    if commit.holds:
        aux_ok = _aux(Term.AUX_OK, guards, config, outcome.threshold, 1.0)
        if aux_ok.passed:
            return Call.PASS, tuple(consulted)
        consulted[0] = rule(Rule.COMMIT, (*commit.conditions, aux_ok))
        if not final:
            return Call.PROBATION, tuple(consulted)
    if branch is not None:
        consulted.append(branch)
        if branch.holds:
            return Call.BRANCH, tuple(consulted)
    if config.probation is None:
        return (Call.SAVE if outcome.saveable else Call.REJECT), tuple(consulted)
    worse = worse_check(outcome, config, guards)
    consulted.append(worse)
    if not worse.holds:
        return Call.REJECT, tuple(consulted)
    if not final:
        return Call.PROBATION, tuple(consulted)
    save = save_check(outcome, config, guards.severe)
    consulted.append(save)
    return (Call.SAVE if save.holds else Call.REJECT), tuple(consulted)


def screening_call(outcome: Outcome, *, config: Config, branched: bool, final: bool) -> Call:
    """`screening_decision` without guardrail evidence, `branched` saying whether the branch
    rule holds."""
    branch = rule(Rule.BRANCH, ()) if branched else None  # no condition: it holds
    return screening_decision(outcome, config=config, branch=branch, final=final)[0]
