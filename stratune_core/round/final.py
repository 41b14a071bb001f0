"""Final skill selection (paper App. B): the current skill and the saved candidates run on a
common set of training samples, split 60/40 into selection and confirmation subsets; each saved
candidate in turn replaces the selected skill only if it passes on both."""

from __future__ import annotations

import numpy as np

from stratune_core.evaluation import final_compare, split_final_set
from stratune_core.records.enums import Purpose
from stratune_core.round.execute import execute_groups
from stratune_core.round.pool import seating
from stratune_core.round.salvage import salvage
from stratune_core.state.candidate_events import FinalComparison
from stratune_core.state.context import Env
from stratune_core.state.events import Event
from stratune_core.state.state import State, round_rng

SALVAGE_STREAM = 2  # run.FINAL_STREAM is 1: salvage draws do not move final selection's


def common_set(state: State, env: Env, skills: tuple[str, ...], rng: np.random.Generator) -> tuple[str, ...]:
    """As many training samples (in rng order) as the remaining budget can run every skill on,
    up to the whole training set; ledger entries are free. With the exact reserve held back
    (`round/reserve.py`) the remaining budget pays for all of them."""
    room = state.budget.remaining
    chosen: list[str] = []
    cost = 0
    for i in rng.permutation(len(env.train_ids)):
        x = env.train_ids[int(i)]
        need = sum(not state.ledger.has(s, x) for s in skills)
        if cost + need <= room:
            chosen.append(x)
            cost += need
    return tuple(chosen)


def final_selection(state: State, env: Env, rng: np.random.Generator) -> tuple[State, tuple[Event, ...], str]:
    cfg = env.config
    out: list[Event] = []
    if cfg.donor_salvage is not None:  # released code only: before final selection
        state, salvaged = salvage(state, env, round_rng(cfg.seed, state.round, SALVAGE_STREAM))
        out.extend(salvaged)
    if not cfg.final_selection:
        return state, tuple(out), state.current_id
    rivals, refused = seating(state, cfg.final_seats, cfg.final_min_common)
    out.extend(refused)
    if not rivals:
        return state, tuple(out), state.current_id
    skills = (state.current_id, *rivals)
    ids = common_set(state, env, skills, rng)
    if len(ids) < 2:
        return state, tuple(out), state.current_id
    state, events, admitted = execute_groups(
        state, env, [(s, ids) for s in skills], purpose=Purpose.FINAL_SELECTION, use_reserve=True
    )
    out.extend(events)
    if not admitted:  # common_set only picks what fits, so this means a broken invariant
        return state, tuple(out), state.current_id
    sel, conf = split_final_set(ids, cfg.final_select_frac)
    selected = state.current_id
    led = state.ledger
    for cand in rivals:
        s_out, c_out = final_compare(
            led.scores(selected, sel), led.scores(cand, sel),
            led.scores(selected, conf), led.scores(cand, conf),
            config=cfg, success_threshold=env.threshold, n_train=len(env.train_ids),
        )
        replaced = s_out.passed and c_out.passed
        out.append(FinalComparison(
            candidate_id=cand, selected_id=selected, selection=s_out, confirmation=c_out,
            replaced=replaced, selection_ids=sel, confirmation_ids=conf,
        ))
        if replaced:
            selected = cand
    return state, tuple(out), selected
