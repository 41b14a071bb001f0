"""What a method's candidate generation makes inside StraTune's rounds (Table 4's hybrids,
`round/hybrid.py`): `Proposal`, and the signature of the function a method's entry carries for
it (`MethodEntry.propose`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from attrs import frozen

from stratune_core.records.base import Execution
from stratune_core.records.enums import Form
from stratune_core.state.context import Env
from stratune_core.state.state import State


@frozen(kw_only=True)
class Proposal:
    text: str | None  # None: nothing proposed
    shown: tuple[str, ...]  # the samples whose executions the generator saw
    form: Form | None
    detail: str = ""


# (env, the round's state, the current skill's executions on the round's batch, the round's rng)
Propose = Callable[[Env, State, Sequence[Execution], np.random.Generator], Proposal]
