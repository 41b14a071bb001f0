"""Choosing the revision operator o_t of a round (paper §3.2, App. A.3; SPEC §3.1, §7).

The optimizer LLM chooses from the optimization state unless the config names another selector
(an ablation). Even then the optimizer still chooses the form under I2/I3, as in the paper's
ablations; only a fixed operator (strategy+form) makes no selection call at all.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from llm_cache.records import CallKind, Message
from stratune_core.context import Env
from stratune_core.enums import Form, Strategy
from stratune_core.events import Event, OperatorChosen, RoundSkipped
from stratune_core.history import OperatorChoice
from stratune_core.optimizer import ask, optimizer_request
from stratune_core.parsing import SelectionReply, parse_selection
from stratune_core.prompts import SELECTION_SYSTEM, repair_prompt, selection_prompt
from stratune_core.selectors import scripted_choice
from stratune_core.state import State
from stratune_core.strategy_floors import floor_strategy

JSON_SHAPE = 'the JSON object {"strategy": ..., "form": ..., "why": ...}'


def available_forms(env: Env, state: State) -> tuple[Form, ...]:
    if env.config.forms == "F4":
        return (Form.F4,)
    has_examples = state.feedback is not None and bool(state.feedback.examples)
    return tuple(f for f in Form if f is not Form.F2 or has_examples)


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
    )
    first = optimizer_request(env, prompt, kind=CallKind.STRATEGY_SELECTION, system=SELECTION_SYSTEM)
    (reply,) = ask(env, [first])
    parsed = parse_selection(reply, allowed=strategies, forms=forms)
    if parsed is not None:
        return parsed, ""
    repair = first.__class__(
        role=first.role,
        model=first.model,
        system=first.system,
        messages=(
            *first.messages,
            Message(role="assistant", content=reply or "(empty)"),
            Message.user(repair_prompt(reply, JSON_SHAPE)),
        ),
        max_tokens=first.max_tokens,
        kind=CallKind.STRATEGY_SELECTION,
    )
    (second,) = ask(env, [repair])
    parsed = parse_selection(second, allowed=strategies, forms=forms)
    return parsed, "" if parsed else f"unusable replies: {reply[:120]!r} / {second[:120]!r}"


def choose_operator(
    state: State, env: Env, rng: np.random.Generator
) -> tuple[State, tuple[Event, ...], OperatorChoice | None]:
    cfg = env.config
    forms = available_forms(env, state)
    fixed = cfg.fixed_operator()
    if fixed is not None:
        strategy, form = fixed
        if form not in forms:
            skip = RoundSkipped(round=state.round, reason=f"{form.value} has no material this round")
            return state, (skip,), None
        choice = OperatorChoice(round=state.round, strategy=strategy, form=form, source="operator")
        return _record(state, choice)
    scripted = scripted_choice(
        cfg.selector,
        round_index=state.round,
        history=state.history,
        rng=rng,
        once_choice=state.once_choice,
        replay_sequence=state.replay_sequence,
        epsilon=cfg.bandit_epsilon,
    )
    source = "first-round" if state.round == 0 and cfg.selector in ("llm", "once") else cfg.selector
    if scripted is None and cfg.selector == "llm" and (floor := floor_strategy(state, cfg)):
        scripted, source = floor, "strategy-floor"
    if scripted is not None:
        if scripted is Strategy.I1 or len(forms) == 1:
            form = forms[0] if len(forms) == 1 else None
            return _record(state, OperatorChoice(round=state.round, strategy=scripted, form=form, source=source))
        reply, detail = _ask_selection(state, env, [scripted], forms)
        form = reply.form if reply is not None and reply.form in forms else forms[0]
        why = reply.why if reply is not None else ""
        fallback = reply is None or reply.form not in forms
        choice = OperatorChoice(
            round=state.round, strategy=scripted, form=form, why=why, source=source, fallback=fallback
        )
        return _record(state, choice, detail)
    reply, detail = _ask_selection(state, env, list(Strategy), forms)
    if reply is None:
        choice = OperatorChoice(
            round=state.round, strategy=Strategy.I1, form=None, source="llm", fallback=True,
            why="fallback to I1: the optimizer's reply could not be parsed",
        )
    else:
        form = None if reply.strategy is Strategy.I1 else reply.form
        fallback = False
        if reply.strategy is not Strategy.I1 and form not in forms:
            form, fallback = forms[0], True
            detail = f"form {reply.form.value if reply.form else None} not available; using {form.value}"
        choice = OperatorChoice(
            round=state.round, strategy=reply.strategy, form=form, why=reply.why, source="llm",
            fallback=fallback,
        )
    if cfg.selector == "once" and state.once_choice is None:
        state = state.evolve(once_choice=choice.strategy)
    return _record(state, choice, detail)


def _record(
    state: State, choice: OperatorChoice, detail: str = ""
) -> tuple[State, tuple[Event, ...], OperatorChoice]:
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
