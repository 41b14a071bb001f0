"""Warm-up (released code; `Config.warmup`): before writing any candidate, the run
executes s_0 on its batches until at least `warmup_solved` samples are known to be solved (the
solved part of a screening set needs them), or `warmup_max_batches` batches have run. A
warm-up round runs its batch and stops there; it is a round like the others for the batch
order, the epochs and the budget (its executions go through admission control like every
other). The first round after the warm-up is the run's first round for the first-round rule
(I1) and the strategy floors.
"""

from __future__ import annotations

from stratune_core.config.knobs import Config
from stratune_core.config.mechanisms import active
from stratune_core.released.events import WarmupRound
from stratune_core.state.state import State


def in_warmup(state: State, config: Config) -> bool:
    """Whether this round is a warm-up round. The warm-up always runs the first batch, then
    goes on while fewer than `warmup_solved` solved samples are known."""
    warmup = config.warmup
    return warmup is not None and state.first_round == state.round and (
        state.round == 0 or (state.round < warmup.max_batches
                             and len(state.ledger.solved_ids(state.current_id))
                             < warmup.solved))


def finish_warmup_round(state: State, config: Config) -> tuple[State, WarmupRound]:
    """After the warm-up round's batch ran: the event, and whether generation starts next."""
    warmup = active(config.warmup)
    known = len(state.ledger.solved_ids(state.current_id))
    done = known >= warmup.solved or state.round + 1 >= warmup.max_batches
    event = WarmupRound(round=state.round, skill_id=state.current_id, solved_known=known,
                        needed=warmup.solved, done=done)
    # Until the warm-up is done the next round is still a candidate for warm-up.
    return state.evolve(first_round=state.round + 1), event
