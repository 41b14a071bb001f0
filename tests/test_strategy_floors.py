"""The released code's strategy-schedule floors: an I1-only selector is made to try I2 at 35% of
the budget and I3 at 50%, each once, with the optimizer still choosing the form."""

from __future__ import annotations

import stratune_core.state.events as ev
from stratune_core.config.knobs import Config
from stratune_core.config.profiles import released
from stratune_core.records.enums import Strategy
from stratune_core.round.run import run
from tests.support.toy import InProcessLLM, ToyOptimizer, ToyTask


def _chosen(config: Config) -> list[tuple[ev.OperatorChosen, float]]:
    optimizer = ToyOptimizer(strategy_plan=("I1",), style="good")
    result = run(config, ToyTask(n_train=60), InProcessLLM(optimizer=optimizer))
    spent, out = 0, []
    for e in result.events:
        if isinstance(e, ev.ExecutionsCharged):
            spent = e.spent
        if isinstance(e, ev.OperatorChosen):
            out.append((e, spent / result.budget))
    return out


def test_an_i1_only_selector_tries_i2_then_i3_at_the_floors():
    chosen = _chosen(Config(seed=2, strategy_floors=True))
    forced = [(e.strategy, frac) for e, frac in chosen if e.source == "strategy-floor"]
    assert [s for s, _ in forced] == [Strategy.I2, Strategy.I3]
    assert forced[0][1] >= 0.35 and forced[1][1] >= 0.50
    # before the first floor only the selector's own choice (I1) appears; each floor fires once
    first = next(i for i, (e, _) in enumerate(chosen) if e.source == "strategy-floor")
    assert {e.strategy for e, _ in chosen[:first]} == {Strategy.I1}
    assert all(e.form is not None for e, _ in chosen if e.source == "strategy-floor")


def test_floors_are_off_in_the_paper_profile_and_on_in_released():
    assert Config().strategy_floors is None and released().strategy_floors is not None
    chosen = _chosen(Config(seed=2))
    assert {e.strategy for e, _ in chosen} == {Strategy.I1}


def test_floors_leave_ablation_selectors_alone():
    chosen = _chosen(Config(seed=2, strategy_floors=True, selector="fixed:I1"))
    assert {e.strategy for e, _ in chosen} == {Strategy.I1}
