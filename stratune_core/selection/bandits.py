"""Bandit strategy selectors (paper App. C.2): the strategy chosen from recorded outcomes alone.

Arms are I1, I2, I3. A round's reward is `History.round_reward` (1 accepted, 0.5 saved, else 0)
credited to the strategy chosen for that round. Untried arms are pulled first, in I1, I2, I3
order, so every rule starts from one observation per arm. Ties go to the first arm in that
order, which keeps runs reproducible without spending a random draw on a tie.
"""

from __future__ import annotations

import enum
import math
from typing import TYPE_CHECKING

from attrs import frozen

from stratune_core.records.enums import Strategy
from stratune_core.records.errors import ConfigError
from stratune_core.selection.outcomes import Outcomes

if TYPE_CHECKING:
    import numpy as np

ARMS: tuple[Strategy, ...] = (Strategy.I1, Strategy.I2, Strategy.I3)


class BanditKind(enum.StrEnum):
    EPSILON_GREEDY = "epsilon_greedy"  # epsilon = Config.bandit_epsilon
    UCB1 = "ucb1"
    THOMPSON = "thompson"  # Beta(1, 1) prior


@frozen(kw_only=True)
class ArmStats:
    pulls: int
    reward: float  # sum of rewards

    @property
    def mean(self) -> float:
        return self.reward / self.pulls if self.pulls else 0.0


def arm_stats(history: Outcomes) -> dict[Strategy, ArmStats]:
    """Pulls and summed reward per arm. One pull per round: if a round records several choices
    (it should not), the first one is the round's strategy."""
    seen: set[int] = set()
    pulls = dict.fromkeys(ARMS, 0)
    reward = dict.fromkeys(ARMS, 0.0)
    for choice in history.choices:
        if choice.round in seen:
            continue
        seen.add(choice.round)
        pulls[choice.strategy] += 1
        reward[choice.strategy] += history.round_reward(choice.round)
    return {a: ArmStats(pulls=pulls[a], reward=reward[a]) for a in ARMS}


def _argmax(values: list[float]) -> Strategy:
    best = max(values)
    return ARMS[values.index(best)]  # first arm among equals


def choose_bandit(
    kind: BanditKind | str, *, history: Outcomes, rng: np.random.Generator, epsilon: float = 0.1
) -> Strategy:
    if kind not in BanditKind.__members__.values():
        names = ", ".join(k.value for k in BanditKind)
        raise ConfigError(f"selector: unknown bandit {kind!r}; use one of {names}")
    if not 0.0 <= epsilon <= 1.0:
        raise ConfigError(f"bandit_epsilon: must be in [0, 1], got {epsilon!r}")
    stats = arm_stats(history)
    for arm in ARMS:
        if stats[arm].pulls == 0:
            return arm
    if kind == BanditKind.EPSILON_GREEDY:
        if rng.random() < epsilon:
            return ARMS[int(rng.integers(len(ARMS)))]
        return _argmax([stats[a].mean for a in ARMS])
    if kind == BanditKind.UCB1:
        total = sum(s.pulls for s in stats.values())
        return _argmax(
            [stats[a].mean + math.sqrt(2.0 * math.log(total) / stats[a].pulls) for a in ARMS]
        )
    # Thompson sampling with a Beta(1, 1) prior; a saved round counts as half a success.
    draws = [
        float(rng.beta(1.0 + stats[a].reward, 1.0 + stats[a].pulls - stats[a].reward)) for a in ARMS
    ]
    return _argmax(draws)
