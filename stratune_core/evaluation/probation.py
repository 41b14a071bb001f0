"""What a screening outcome decides (paper App. B; the released code's probation,
docs/released-code.md §4.6).

Paper: a candidate that passes the screening gates goes on to validation; one that fails them
is saved when the save rule holds with a gain below eps_s, else rejected.

Released (`Config.probation`): a screening is conclusive only when at least `ready_changes`
samples changed (wins + losses). An inconclusive screening that is not clearly worse puts the
candidate on probation: it is screened again on a second set, disjoint from the first, and the
two sets are decided together ("final"). A candidate that then passes the gates with too few
changes, or fails them with a positive gain under the save rule, is saved; the rest are rejected.
Clearly worse (rejected at once): LB(D, S) > `lb_limit`, LB(D, D+U) > `probation_reject_lb`, no
win among three or more losses, or, with enough changes, three net losses or a gain <= -eps_s
with more losses than wins.
"""

from __future__ import annotations

import enum

from stratune_core.config import Config
from stratune_core.evaluation.gates import Outcome
from stratune_core.evaluation.screening import save_rule
from stratune_core.evaluation.wilson import wilson_lower_bound

CLEAR_NET_LOSSES = 3


class Call(enum.Enum):
    PASS = "pass"  # on to validation
    SAVE = "save"
    BRANCH = "branch"  # saved by the branch rule
    REJECT = "reject"
    PROBATION = "probation"  # screen again on a second set


def ready(outcome: Outcome, config: Config) -> bool:
    """Enough changed samples for the screening to decide on its own."""
    return outcome.stats.wins + outcome.stats.losses >= config.ready_changes


def clearly_worse(outcome: Outcome, config: Config) -> bool:
    stats, counts = outcome.stats, outcome.stats.counts
    if wilson_lower_bound(counts.D, counts.S, config.z) > config.lb_limit:
        return True
    if wilson_lower_bound(counts.D, counts.D + counts.U, config.z) > config.probation_reject_lb:
        return True
    if stats.wins == 0 and stats.losses >= CLEAR_NET_LOSSES:
        return True
    net_losses = stats.losses - stats.wins
    worse = stats.gain <= -outcome.threshold and stats.losses > stats.wins
    return ready(outcome, config) and (worse or net_losses >= CLEAR_NET_LOSSES)


def screening_call(outcome: Outcome, *, config: Config, branched: bool, final: bool) -> Call:
    """`branched`: the branch rule holds (only asked when `branch_saves`); `final`: no further
    screening set will come (the second set of a probation, or none can be paid for)."""
    if outcome.stats.n == 0:
        return Call.REJECT
    conclusive = not config.probation or ready(outcome, config)
    if outcome.passed and conclusive:
        return Call.PASS
    if branched:
        return Call.BRANCH
    if not config.probation:
        return Call.SAVE if outcome.saveable else Call.REJECT
    if clearly_worse(outcome, config):
        return Call.REJECT
    if not final:
        return Call.PROBATION
    return Call.SAVE if save_rule(outcome, config) else Call.REJECT
