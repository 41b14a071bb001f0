"""The released code's screening decisions as tables of named conditions (notes on the released
code, `decide`): whether a candidate is clearly worse (rejected at once), the commit check with
the guardrails, the branch rule and the save rule. Each rule is a `RuleCheck` that lists every
condition with its value and limit, so an event can say which one failed (`RuleChecked`) where
the released code returns early without saying why.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable

from attrs import field, frozen


class Rule(enum.StrEnum):
    NOT_WORSE = "not_clearly_worse"  # fails: rejected at once (else probation may follow)
    COMMIT = "commit"  # the released conditions for acceptance on top of the screening gates
    BRANCH = "branch"  # saved without acceptance: wins and losses spread over strata
    SAVE = "save"  # saved for final skill selection after an inconclusive screening


class Term(enum.StrEnum):
    """One condition of a rule; `value` is compared with `limit` as the comment says."""

    SAMPLES = "samples"  # pairs screened >= 1
    READY = "ready"  # wins + losses >= ready_changes
    GATES = "gates"  # screening gates failed <= 0
    LB_D_S = "lb_d_s"  # LB(D, S) <= limit
    LB_D_DU = "lb_d_du"  # LB(D, D+U) <= limit
    NO_WIN_LOSSES = "no_win_losses"  # losses without any win <= limit
    WORSE_GAIN = "worse_gain"  # with enough changes: not (gain <= -eps_s and L > W); value gain
    NET_LOSSES = "net_losses"  # with enough changes: losses - wins <= limit
    SIDE_WINS = "side_wins"  # wins >= max(2, ceil(frac * changes))
    SIDE_LOSSES = "side_losses"  # losses >= the same
    WIN_STRATA = "win_strata"  # strata with a win >= 2
    LOSS_STRATA = "loss_strata"  # strata with a loss >= 2
    MEAN_UP = "mean_up"  # mean positive change >= eps_s / 2
    MEAN_DOWN = "mean_down"  # mean negative change >= eps_s / 2
    GUARD_SEVERE = "guard_severe"  # regressions among the random part of Q_s <= limit
    AUX_CATASTROPHIC = "aux_catastrophic"  # guardrail metric change >= -2 eps_guard
    AUX_OK = "aux_ok"  # guardrail metric change >= -eps_guard
    GAIN_POSITIVE = "gain_positive"  # gain > 0
    WINS_VS_LOSSES = "wins_vs_losses"  # wins - losses >= 0


@frozen(kw_only=True)
class Condition:
    term: Term = field(converter=Term)
    passed: bool
    value: float = field(converter=float)  # counts too, so that a trace reads back the same
    limit: float = field(converter=float)


@frozen(kw_only=True)
class RuleCheck:
    rule: Rule = field(converter=Rule)
    conditions: tuple[Condition, ...] = field(converter=tuple)

    @property
    def holds(self) -> bool:
        return all(c.passed for c in self.conditions)

    @property
    def failed(self) -> tuple[Term, ...]:
        return tuple(c.term for c in self.conditions if not c.passed)


def at_most(term: Term, value: float, limit: float, *, applies: bool = True) -> Condition:
    """value <= limit (always passed when the condition does not apply)."""
    return Condition(term=term, passed=not applies or value <= limit, value=value, limit=limit)


def at_least(term: Term, value: float, limit: float, *, tol: float = 0.0) -> Condition:
    return Condition(term=term, passed=value >= limit - tol, value=value, limit=limit)


def rule(name: Rule, conditions: Iterable[Condition]) -> RuleCheck:
    return RuleCheck(rule=name, conditions=tuple(conditions))
