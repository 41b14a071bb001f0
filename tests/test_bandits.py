"""Bandit strategy selectors over the recorded outcomes (paper App. C.2)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from stratune_core.records.enums import Strategy, Verdict
from stratune_core.records.errors import ConfigError
from stratune_core.selection.bandits import arm_stats, choose_bandit
from stratune_core.state.history import History, HistoryEntry, OperatorChoice

I1, I2, I3 = Strategy.I1, Strategy.I2, Strategy.I3
OUTCOME = {1.0: Verdict.ACCEPTED, 0.5: Verdict.SAVED, 0.0: Verdict.REJECTED_SCREENING}


def history(*rounds: tuple[Strategy, float]) -> History:
    """One choice per round and one candidate whose verdict earns the given reward."""
    h = History()
    for r, (strategy, reward) in enumerate(rounds):
        h = h.add_choice(OperatorChoice(round=r, strategy=strategy, form=None))
        h = h.add_entry(
            HistoryEntry(
                round=r, strategy=strategy, form=None, candidate_id=f"c{r}", verdict=OUTCOME[reward]
            )
        )
    return h


def rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def test_arm_stats_credit_round_rewards_to_the_chosen_strategy():
    stats = arm_stats(history((I1, 1.0), (I2, 0.5), (I1, 0.0), (I3, 0.0)))
    assert (stats[I1].pulls, stats[I1].reward) == (2, 1.0)
    assert (stats[I2].pulls, stats[I2].reward) == (1, 0.5)
    assert (stats[I3].pulls, stats[I3].mean) == (1, 0.0)


def test_round_with_several_outcomes_takes_the_best_and_counts_once():
    h = history((I2, 0.0)).add_entry(
        HistoryEntry(round=0, strategy=I2, form=None, candidate_id="x", verdict=Verdict.SAVED)
    )
    h = h.add_choice(OperatorChoice(round=0, strategy=I3, form=None))  # duplicate: ignored
    stats = arm_stats(h)
    assert (stats[I2].pulls, stats[I2].reward, stats[I3].pulls) == (1, 0.5, 0)


@pytest.mark.parametrize("kind", ["epsilon_greedy", "ucb1", "thompson"])
def test_untried_arms_first_in_order(kind):
    assert choose_bandit(kind, history=History(), rng=rng()) is I1
    assert choose_bandit(kind, history=history((I1, 1.0)), rng=rng()) is I2
    assert choose_bandit(kind, history=history((I2, 0.0)), rng=rng()) is I1
    assert choose_bandit(kind, history=history((I1, 1.0), (I2, 1.0)), rng=rng(), epsilon=1.0) is I3


def test_epsilon_greedy_exploits_the_best_mean():
    h = history((I1, 0.0), (I2, 1.0), (I3, 0.5), (I1, 0.5))
    assert all(
        choose_bandit("epsilon_greedy", history=h, rng=rng(s), epsilon=0.0) is I2 for s in range(20)
    )


def test_epsilon_greedy_ties_go_to_the_first_arm():
    h = history((I1, 0.0), (I2, 0.0), (I3, 0.0))
    assert choose_bandit("epsilon_greedy", history=h, rng=rng(), epsilon=0.0) is I1


def test_epsilon_greedy_explores_with_probability_epsilon():
    h = history((I1, 1.0), (I2, 0.0), (I3, 0.0))
    picks = [choose_bandit("epsilon_greedy", history=h, rng=rng(s), epsilon=1.0) for s in range(60)]
    assert set(picks) == {I1, I2, I3}
    # reproduce the rule by hand with the same generator: explore draw, then the arm draw
    for s in range(10):
        g = rng(s)
        expected = (I1, I2, I3)[int(g.integers(3))] if g.random() < 0.5 else I1
        assert choose_bandit("epsilon_greedy", history=h, rng=rng(s), epsilon=0.5) is expected


def test_ucb1_formula_by_hand():
    # I1: 3 pulls, reward 1.5 ; I2: 1 pull, reward 0 ; I3: 2 pulls, reward 1.0 ; N = 6
    h = history((I1, 1.0), (I2, 0.0), (I3, 0.5), (I1, 0.5), (I3, 0.5), (I1, 0.0))
    bonus = lambda n: math.sqrt(2 * math.log(6) / n)  # noqa: E731
    scores = {I1: 0.5 + bonus(3), I2: 0.0 + bonus(1), I3: 0.5 + bonus(2)}
    assert scores[I2] > scores[I3] > scores[I1]  # 1.893 > 1.839 > 1.593
    assert choose_bandit("ucb1", history=h, rng=rng()) is I2
    # one more unrewarded I2 round: I2 and I3 now have 2 pulls each, I3 the higher mean
    h2 = history((I1, 1.0), (I2, 0.0), (I3, 0.5), (I1, 0.5), (I3, 0.5), (I1, 0.0), (I2, 0.0))
    assert choose_bandit("ucb1", history=h2, rng=rng()) is I3


def test_thompson_matches_beta_draws_from_the_same_seed():
    h = history((I1, 1.0), (I2, 0.5), (I3, 0.0), (I2, 0.0))
    for s in range(10):
        g = rng(s)
        draws = [g.beta(2.0, 1.0), g.beta(1.5, 2.5), g.beta(1.0, 2.0)]
        expected = (I1, I2, I3)[int(np.argmax(draws))]
        assert choose_bandit("thompson", history=h, rng=rng(s)) is expected
    assert choose_bandit("thompson", history=h, rng=rng(7)) is choose_bandit(
        "thompson", history=h, rng=rng(7)
    )


def test_thompson_prefers_the_rewarded_arm_mostly():
    h = history(*([(I1, 1.0)] * 8 + [(I2, 0.0)] * 8 + [(I3, 0.0)] * 8))
    picks = [choose_bandit("thompson", history=h, rng=rng(s)) for s in range(50)]
    assert picks.count(I1) > 40


def test_bad_kind_or_epsilon():
    with pytest.raises(ConfigError, match="unknown bandit 'exp3'"):
        choose_bandit("exp3", history=History(), rng=rng())
    with pytest.raises(ConfigError, match="bandit_epsilon"):
        choose_bandit("epsilon_greedy", history=History(), rng=rng(), epsilon=1.5)
