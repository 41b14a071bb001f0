"""Strategy selectors (the ablations of paper §4.1) with the first-round rule, and the registry."""

from __future__ import annotations

import attrs
import numpy as np
import pytest

from stratune_core.budget.admission import Budget
from stratune_core.config.knobs import Config
from stratune_core.records.enums import ChoiceRule, Strategy, Verdict
from stratune_core.records.errors import ConfigError
from stratune_core.round.operator_choice import pick_strategy
from stratune_core.selection.bandits import choose_bandit
from stratune_core.selection.selectors.base import SelectorContext
from stratune_core.selection.selectors.registry import SELECTORS, parse_selector, selector_usage
from stratune_core.selection.selectors.scripted import ReplaySequence, recorded_strategies
from stratune_core.state.events import OperatorChosen
from stratune_core.state.history import History, HistoryEntry, OperatorChoice

I1, I2, I3 = Strategy.I1, Strategy.I2, Strategy.I3


def choose(selector, round_index=0, *, history=None, seed=0, once=None, replay=(), epsilon=0.1):
    if isinstance(selector, str):
        selector = parse_selector(selector)
    if isinstance(selector, ReplaySequence):
        selector = attrs.evolve(selector, strategies=replay)
    context = SelectorContext(
        round=round_index, history=history or History(), budget=Budget(limit=100),
        config=Config(bandit_epsilon=epsilon), rng=np.random.default_rng(seed),
    )
    pick = pick_strategy(selector, context, once)
    return None if pick is None else pick.strategy


def test_every_registered_selector_is_handled():
    for cls in SELECTORS:
        for selector in cls.examples():
            assert choose(selector, replay=(I2,)) in (I1, I2, I3)  # round 0 never needs the LLM


@pytest.mark.parametrize(
    "selector", ["llm", "once", "bandit:epsilon_greedy", "bandit:ucb1", "bandit:thompson"]
)
def test_first_round_is_i1(selector):
    assert choose(selector, 0, once=I3 if selector != "once" else None) is I1


def test_the_first_round_rule_names_itself_only_where_the_llm_would_choose():
    context = SelectorContext(round=0, history=History(), budget=Budget(limit=100),
                              config=Config(), rng=np.random.default_rng(0))
    assert pick_strategy(parse_selector("llm"), context, None).source is ChoiceRule.FIRST_ROUND
    assert pick_strategy(parse_selector("once"), context, None).source is ChoiceRule.FIRST_ROUND
    assert str(pick_strategy(parse_selector("bandit:ucb1"), context, None).source) == "bandit:ucb1"


def test_llm_decides_after_the_first_round():
    assert [choose("llm", r) for r in range(1, 5)] == [None] * 4


@pytest.mark.parametrize(
    ("selector", "strategy"), [("fixed:I1", I1), ("fixed:I2", I2), ("fixed:I3", I3)]
)
def test_fixed_every_round_including_the_first(selector, strategy):
    assert {choose(selector, r) for r in range(6)} == {strategy}


def test_fixed_with_a_bad_label():
    with pytest.raises(ConfigError, match="fixed:I9"):
        choose("fixed:I9")


def test_rotation_order():
    assert [choose("rotation", r) for r in range(7)] == [I1, I2, I3, I1, I2, I3, I1]


def test_random_is_uniform_and_seeded():
    picks = [choose("random", r, seed=s) for s in range(300) for r in (0, 5)]
    counts = [picks.count(s) for s in (I1, I2, I3)]
    assert all(150 < c < 250 for c in counts), counts
    assert choose("random", 3, seed=42) is choose("random", 3, seed=42)
    g = np.random.default_rng(9)
    assert choose("random", 0, seed=9) is (I1, I2, I3)[int(g.integers(3))]


def test_once_waits_for_the_first_free_decision_then_keeps_it():
    assert choose("once", 1, once=None) is None
    assert choose("once", 1, once=I2) is I2
    assert choose("once", 9, once=I3) is I3
    once = parse_selector("once")
    assert once.remember(None, I2) is I2 and once.remember(I2, I3) is I2


def test_replay_is_aligned_by_round():
    """Recorded rounds 0:I1, 1:skipped, 2:I3, 3:I2. Round r uses the strategy of
    recorded round r (the old filter-and-wrap gave I1, I3, I2, I1); a round with nothing
    recorded, skipped or past the recording's end, uses I1 and says so."""
    seq = (I1, None, I3, I2)
    assert [choose("replay:run", r, replay=seq) for r in range(6)] == [I1, I1, I3, I2, I1, I1]
    selector = attrs.evolve(parse_selector("replay:run"), strategies=seq)
    context = SelectorContext(round=1, history=History(), budget=Budget(limit=1), config=Config(),
                              rng=np.random.default_rng(0))
    assert selector.choose(context, None).source is ChoiceRule.NOT_RECORDED
    later = attrs.evolve(context, round=2)
    assert selector.choose(later, None).source == selector


def test_recorded_strategies_keep_skipped_and_trailing_rounds():
    chosen = [OperatorChosen(round=r, strategy=s, form=None, why="", source="llm")
              for r, s in ((0, I1), (2, I3), (3, I2))]
    assert recorded_strategies(6, chosen) == (I1, None, I3, I2, None, None)
    assert recorded_strategies(2, chosen) == (I1, None, I3, I2)  # an interrupted trace


def test_replay_without_sequence_is_a_config_error():
    with pytest.raises(ConfigError, match="replay:old.jsonl"):
        choose("replay:old.jsonl", 0, replay=())


def test_unknown_selector():
    with pytest.raises(ConfigError, match="unknown value 'no_such_selector'"):
        choose("no_such_selector", 1)


@pytest.mark.parametrize("text", ["llm:x", "rotation:2", "bandit:", "bandit:greedy", "replay:",
                                  "fixed:", "fixed", "Fixed:I1", " llm", ""])
def test_malformed_spellings_are_one_line_config_errors(text):
    with pytest.raises(ConfigError) as info:
        parse_selector(text)
    assert str(info.value).startswith("selector") and "\n" not in str(info.value)


def test_every_spelling_reads_back_to_the_same_record():
    for cls in SELECTORS:
        assert cls.usage in selector_usage()
        for selector in cls.examples():
            back = parse_selector(str(selector))
            if isinstance(selector, ReplaySequence):  # the sequence travels beside the spelling
                back = attrs.evolve(back, strategies=selector.strategies)
            assert back == selector


def _history(*rounds):
    h = History()
    for r, (strategy, verdict) in enumerate(rounds):
        h = h.add_choice(OperatorChoice(round=r, strategy=strategy, form=None))
        h = h.add_entry(
            HistoryEntry(
                round=r, strategy=strategy, form=None, candidate_id=f"c{r}", verdict=verdict
            )
        )
    return h


def test_bandits_choose_untried_arms_after_round_zero():
    h = _history((I1, Verdict.ACCEPTED))
    for kind in ("epsilon_greedy", "ucb1", "thompson"):
        assert choose(f"bandit:{kind}", 1, history=h) is I2
        h2 = _history((I1, Verdict.ACCEPTED), (I2, Verdict.REJECTED_SCREENING))
        assert choose(f"bandit:{kind}", 2, history=h2) is I3


def test_bandit_delegates_with_the_same_rng_and_epsilon():
    h = _history((I1, Verdict.SAVED), (I2, Verdict.REJECTED_SCREENING), (I3, Verdict.ACCEPTED))
    for seed in range(10):
        for kind in ("epsilon_greedy", "ucb1", "thompson"):
            expected = choose_bandit(kind, history=h, rng=np.random.default_rng(seed), epsilon=0.7)
            assert choose(f"bandit:{kind}", 3, history=h, seed=seed, epsilon=0.7) is expected
    # with epsilon 0 the greedy arm is the accepted one
    assert choose("bandit:epsilon_greedy", 3, history=h, epsilon=0.0) is I3
