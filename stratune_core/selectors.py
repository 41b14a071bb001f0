"""Scripted strategy selectors: every way of choosing the round's strategy other than asking the
optimizer LLM (SPEC §7 ablations). Pure: randomness only through the `rng` passed in."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from stratune_core.bandits import choose_bandit
from stratune_core.enums import Strategy
from stratune_core.errors import ConfigError
from stratune_core.history import History

ORDER: tuple[Strategy, ...] = (Strategy.I1, Strategy.I2, Strategy.I3)


def scripted_choice(
    selector: str,
    *,
    round_index: int,
    history: History,
    rng: np.random.Generator,
    once_choice: Strategy | None,
    replay_sequence: Sequence[Strategy],
    epsilon: float = 0.1,
) -> Strategy | None:
    """The strategy for round `round_index` (0-based), or None when the optimizer LLM decides.

    The first round is I1 for "llm", "once" and the bandits: there is no history to choose from
    yet (paper §3.2). "fixed:*", "random", "rotation" and "replay:*" follow their own rule from
    round 0 on. `epsilon` is the ε of `bandit:epsilon_greedy` (Config.bandit_epsilon).
    """
    if selector.startswith("fixed:"):
        label = selector.removeprefix("fixed:")
        if label not in Strategy.__members__:
            raise ConfigError(f"selector: {selector!r} names no strategy; use fixed:I1|I2|I3")
        return Strategy[label]
    if selector == "random":
        return ORDER[int(rng.integers(len(ORDER)))]
    if selector == "rotation":
        return ORDER[round_index % len(ORDER)]
    if selector.startswith("replay:"):
        if not replay_sequence:
            raise ConfigError(
                f"selector: {selector!r} needs the recorded strategy sequence, which is empty; "
                "check that the trace records at least one round"
            )
        return replay_sequence[round_index % len(replay_sequence)]
    if selector in ("llm", "once") or selector.startswith("bandit:"):
        if round_index == 0:
            return Strategy.I1
        if selector == "llm":
            return None
        if selector == "once":
            return once_choice
        return choose_bandit(
            selector.removeprefix("bandit:"), history=history, rng=rng, epsilon=epsilon
        )
    raise ConfigError(f"selector: unknown value {selector!r}")
