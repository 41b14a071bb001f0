"""`once` keeps the optimizer's first FREE decision (paper App. C): a selection round whose
replies were unusable fell back to I1, which is not a decision of the optimizer, so `once`
goes on asking until a usable reply chooses, and keeps that strategy from then on."""

from __future__ import annotations

from attrs import frozen

import stratune_core.state.events as ev
from llm_cache.records import Request, Response, Usage
from stratune_core.config.knobs import Config
from stratune_core.records.enums import ChoiceRule, Strategy
from stratune_core.round.run import iterate
from stratune_core.selection.selectors.adaptive import LLMSelector, Once
from tests.support.toy import InProcessLLM, ToyOptimizer, ToyTask

SELECTION = "You are the strategy controller"


@frozen
class JunkFirst:
    """The toy optimizer, but its first `junk` selection requests (a call and its repair)
    get prose that no parser accepts; it otherwise picks I3."""

    junk: int = 2
    inner: ToyOptimizer = ToyOptimizer(style="good", strategy_plan=("I3",))
    seen: list[int] = []

    def __call__(self, request: Request) -> Response:
        if request.system.startswith(SELECTION):
            self.seen.append(1)
            if len(self.seen) <= self.junk:
                return Response(text="Hard to say; any of them.", usage=Usage(input_tokens=1,
                                                                               output_tokens=1))
        return self.inner(request)


def _chosen(junk: int) -> list[ev.OperatorChosen]:
    llm = InProcessLLM(optimizer=JunkFirst(junk=junk, seen=[]))
    config = Config(selector="once", seed=1, max_rounds=6)
    events = [e for _, evs in iterate(config, ToyTask(n_train=48), llm) for e in evs]
    return [e for e in events if isinstance(e, ev.OperatorChosen)]


def test_once_skips_a_fallback_and_keeps_the_first_free_decision():
    chosen = _chosen(junk=2)
    first, fallback, free, *kept = chosen
    assert first.source is ChoiceRule.FIRST_ROUND
    assert fallback.fallback and fallback.strategy is Strategy.I1
    assert isinstance(fallback.source, LLMSelector)
    assert not free.fallback and free.strategy is Strategy.I3 and isinstance(free.source, LLMSelector)
    assert kept and all(isinstance(c.source, Once) and c.strategy is Strategy.I3 for c in kept)


def test_once_locks_at_once_when_the_first_reply_is_usable():
    first, free, *kept = _chosen(junk=0)
    assert first.source is ChoiceRule.FIRST_ROUND and free.strategy is Strategy.I3
    assert kept and all(isinstance(c.source, Once) and c.strategy is Strategy.I3 for c in kept)
