"""Choosing the revision operator o_t of a round (paper §3.2, App. A.3).

The configured selector (`stratune_core/selection/selectors/`) picks the strategy or leaves the pick to the
optimizer LLM. These rules complete or override the selectors, each in one place here:
- a fixed operator (strategy + form) decides everything and makes no selection call (`_fixed`);
- the first round is I1: there is no history to choose from yet (`pick_strategy`; after a
  warm-up, the first round that writes candidates);
- when something other than the optimizer picked I2 or I3, the optimizer still picks the form,
  as in the paper's ablations (`_with_form`).
The strategy floors (`selection/selectors/adaptive.py`), the affordability guards, which narrow the
menu (`round/affordability.py`), and I2 on a batch without failures (`choose_without_failures`) are
rules of the LLM selector alone (released code).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

import numpy as np

from llm_cache.records import CallKind
from stratune_core.config.knobs import Config
from stratune_core.config.operators import Operator, available_forms
from stratune_core.operators.parsing import SelectionReply, parse_selection
from stratune_core.prompts.budget import turn_budget
from stratune_core.prompts.optimizer import ask, optimizer_request, repair_request
from stratune_core.prompts.templates import SELECTION_SYSTEM, selection_prompt
from stratune_core.records.enums import ChoiceRule, Form, SkipReason, Strategy
from stratune_core.records.errors import CoreInvariantError
from stratune_core.released.events import StrategiesNarrowed
from stratune_core.round.affordability import offered_strategies
from stratune_core.round.prep import checkable_count
from stratune_core.selection.selectors.adaptive import LLMSelector
from stratune_core.selection.selectors.base import Pick, Selector, SelectorContext
from stratune_core.state.context import Env
from stratune_core.state.events import Event, OperatorChosen, RoundSkipped
from stratune_core.state.history import OperatorChoice
from stratune_core.state.state import State

JSON_SHAPE = 'the JSON object {"strategy": ..., "form": ..., "why": ...}'

Chosen = tuple[State, tuple[Event, ...], OperatorChoice | None]


def _ask_selection(
    state: State, env: Env, strategies: Sequence[Strategy], forms: Sequence[Form]
) -> tuple[SelectionReply | None, str]:
    """One selection call and, if its reply is unusable, one repair call."""
    assert state.feedback is not None
    ref = state.refinement
    prompt = selection_prompt(
        feedback=state.feedback,
        history=state.history if env.config.history else None,
        refinement=ref,
        intermediate_text=state.text(ref.intermediate_id) if ref.intermediate_id else None,
        strategies=strategies,
        forms=forms,
        checkable=checkable_count(env, state.feedback),
        blind=env.config.verified_fixes is not None,
        budget=turn_budget(env.config.prompt_tokens, SELECTION_SYSTEM),
        past_revisions=env.config.past_revisions,
    )
    first = optimizer_request(env, prompt, kind=CallKind.STRATEGY_SELECTION, system=SELECTION_SYSTEM)
    (reply,) = ask(env, [first])
    parsed = parse_selection(reply, allowed=strategies, forms=forms)
    if parsed is not None:
        return parsed, ""
    repair = repair_request(first, reply, JSON_SHAPE, budget=env.config.prompt_tokens)
    (second,) = ask(env, [repair])
    parsed = parse_selection(second, allowed=strategies, forms=forms)
    return parsed, "" if parsed else f"unusable replies: {reply[:120]!r} / {second[:120]!r}"


def choose_operator(state: State, env: Env, rng: np.random.Generator) -> Chosen:
    config = env.config
    if config.operator is not None:  # a fixed operator's form never rests
        return _fixed(state, config.operator, available_forms(config.forms, state.feedback))
    forms = available_forms(config.forms, state.feedback, state.resting_form)
    # the affordability guards narrow the LLM selector's menu (its floors included)
    guarded = isinstance(config.selector, LLMSelector)
    offered = offered_strategies(state, config) if guarded else tuple(Strategy)
    pick = _scripted_pick(state, env, rng, offered)
    if pick is not None:
        return _record(state, *_with_form(state, env, pick, forms))
    narrowed: tuple[Event, ...] = ()
    if len(offered) < len(Strategy):
        narrowed = (StrategiesNarrowed(
            round=state.round, offered=offered,
            dropped=tuple(s for s in Strategy if s not in offered),
            remaining=state.budget.remaining),)
    if offered == (Strategy.I1,):  # nothing to choose: no selection call
        choice = OperatorChoice(round=state.round, strategy=Strategy.I1, form=None,
                                source=ChoiceRule.AFFORDABILITY,
                                why="only I1 is affordable with the budget left")
        state, events, chosen = _record(state, choice)
        return state, (*narrowed, *events), chosen
    choice, detail, free = _llm_choice(state, env, forms, offered)
    # a selector remembers the optimizer's free decisions only, never the fallback I1 of an
    # unusable reply (`once` keeps "the strategy chosen at the first free decision")
    if free:
        state = state.evolve(
            selector_memory=config.selector.remember(state.selector_memory, choice.strategy))
    state, events, chosen = _record(state, choice, detail)
    return state, (*narrowed, *events), chosen


def refines_without_failures(state: State, config: Config) -> bool:
    """Released code (docs/released-code.md §2.2): a batch that shows no failure, even after
    pooling, still runs I2 when a refinement is under way and I2 is affordable. Otherwise (and in
    the paper) the round is skipped."""
    return (config.i2_without_failures and config.operator is None
            and isinstance(config.selector, LLMSelector) and state.refinement.steps > 0
            and Strategy.I2 in offered_strategies(state, config))


def choose_without_failures(state: State, env: Env) -> Chosen:
    """I2 (`refines_without_failures`); the optimizer picks its form."""
    forms = available_forms(env.config.forms, state.feedback, state.resting_form)
    pick = Pick(strategy=Strategy.I2, source=ChoiceRule.NO_FAILURES)
    return _record(state, *_with_form(state, env, pick, forms))


def _fixed(state: State, operator: Operator, forms: tuple[Form, ...]) -> Chosen:
    if operator.form not in forms:
        if operator.form is not Form.F2:  # Config refuses a non-F4 operator under forms=F4
            raise CoreInvariantError(f"operator {operator}: {operator.form.value} is not offered")
        return state, (RoundSkipped(round=state.round, reason=SkipReason.NO_EXAMPLES),), None
    choice = OperatorChoice(
        round=state.round, strategy=operator.strategy, form=operator.form, source=ChoiceRule.OPERATOR
    )
    return _record(state, choice)


def pick_strategy(selector: Selector, context: SelectorContext, memory: Hashable) -> Pick | None:
    """The selector's pick, or None for the optimizer LLM to choose; in the first round I1
    wherever the optimizer would choose."""
    pick = selector.choose(context, memory)
    if pick is None and context.round == context.first_round:
        return Pick(strategy=Strategy.I1, source=ChoiceRule.FIRST_ROUND)
    return pick


def _scripted_pick(
    state: State, env: Env, rng: np.random.Generator, offered: tuple[Strategy, ...]
) -> Pick | None:
    context = SelectorContext(
        round=state.round, history=state.history, budget=state.budget, config=env.config, rng=rng,
        first_round=state.first_round, offered=offered,
    )
    return pick_strategy(env.config.selector, context, state.selector_memory)


def _with_form(
    state: State, env: Env, pick: Pick, forms: tuple[Form, ...]
) -> tuple[OperatorChoice, str]:
    """The picked strategy with its form: none for I1, the only one on offer, or the optimizer's."""
    if pick.strategy is Strategy.I1 or len(forms) == 1:
        form = forms[0] if len(forms) == 1 else None
        return OperatorChoice(
            round=state.round, strategy=pick.strategy, form=form, source=pick.source
        ), ""
    reply, detail = _ask_selection(state, env, [pick.strategy], forms)
    usable = reply is not None and reply.form in forms
    choice = OperatorChoice(
        round=state.round, strategy=pick.strategy,
        form=reply.form if usable and reply is not None else forms[0],
        why=reply.why if reply is not None else "", source=pick.source, fallback=not usable,
    )
    return choice, detail


def _llm_choice(
    state: State, env: Env, forms: tuple[Form, ...], offered: tuple[Strategy, ...]
) -> tuple[OperatorChoice, str, bool]:
    """The optimizer chooses strategy and form; an unusable reply falls back to I1. The flag
    says whether the strategy was the optimizer's free decision (not a fallback)."""
    reply, detail = _ask_selection(state, env, list(offered), forms)
    llm = LLMSelector()
    if reply is None:
        return OperatorChoice(
            round=state.round, strategy=Strategy.I1, form=None, source=llm, fallback=True,
            why="fallback to I1: the optimizer's reply could not be parsed",
        ), detail, False
    form = None if reply.strategy is Strategy.I1 else reply.form
    fallback = False
    if reply.strategy is not Strategy.I1 and form not in forms:
        form, fallback = forms[0], True
        detail = f"form {reply.form.value if reply.form else None} not available; using {form.value}"
    choice = OperatorChoice(
        round=state.round, strategy=reply.strategy, form=form, why=reply.why, source=llm,
        fallback=fallback,
    )
    return choice, detail, True


def _record(state: State, choice: OperatorChoice, detail: str = "") -> Chosen:
    event = OperatorChosen(
        round=state.round,
        strategy=choice.strategy,
        form=choice.form,
        why=choice.why,
        source=choice.source,
        fallback=choice.fallback,
        detail=detail,
    )
    return state.evolve(history=state.history.add_choice(choice)), (event,), choice
