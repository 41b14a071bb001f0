"""The optimization state Omega_t = (s_t, E_t, H_t, p_t), plus what keeps `step` pure: the
execution ledger, the budget, the batches and the fixed ranking subset."""

from __future__ import annotations

from collections.abc import Hashable, Mapping

import attrs
import numpy as np
from attrs import field, frozen

from stratune_core.budget.admission import Budget
from stratune_core.budget.ledger import Ledger
from stratune_core.config.knobs import Config
from stratune_core.config.shape import run_shape
from stratune_core.evaluation.batches import make_batches
from stratune_core.evaluation.screen_usage import ScreenUsage
from stratune_core.evaluation.sets import ranking_set
from stratune_core.feedback.execution import Feedback
from stratune_core.operators.refinement import Refinement
from stratune_core.operators.submission import Submission
from stratune_core.records.enums import Form, StopReason
from stratune_core.records.errors import ConfigError
from stratune_core.records.ids import text_id
from stratune_core.records.task import Task
from stratune_core.state.history import History


def round_rng(seed: int, round_index: int, stream: int = 0) -> np.random.Generator:
    """A round's randomness depends only on (run seed, round, stream)."""
    # SeedSequence takes non-negative words only; the setup stream uses round -1.
    return np.random.default_rng(np.random.SeedSequence([seed, round_index + 1, stream]))


SETUP_ROUND = -1  # the rng stream used once, before round 0, for batches and the ranking subset


@frozen(kw_only=True)
class State:
    round: int = 0
    current_id: str
    skills: Mapping[str, str]  # every skill text seen in the run, by id
    parents: Mapping[str, str | None]
    feedback: Feedback | None = None
    history: History = History()
    refinement: Refinement = Refinement()
    saved: tuple[str, ...] = field(default=(), converter=tuple)
    ledger: Ledger
    budget: Budget
    batches: tuple[tuple[str, ...], ...]
    ranking_ids: tuple[str, ...] = field(converter=tuple)
    accepted_per_epoch: tuple[int, ...] = field(default=(), converter=tuple)
    selector_memory: Hashable = None  # what the configured selector keeps between rounds
    idle_rounds: int = 0  # consecutive rounds that executed nothing new
    unusable_rounds: int = 0  # consecutive rounds whose every candidate was refused unevaluated
    resting_form: Form | None = None  # its candidates were all refused: not offered next round
    last_i2_submission: int | None = None  # the round I2 last submitted a draft for evaluation
    first_round: int = 0  # the first round that may write candidates (after a warm-up)
    # released code: how often each sample served in screening sets, and candidates whose
    # screening set was not ready, screened again next round (`round/readiness.py`)
    screen_usage: ScreenUsage = ScreenUsage()
    deferred: tuple[Submission, ...] = field(default=(), converter=tuple)
    finished: bool = False
    stop_reason: StopReason | None = None

    @property
    def current_text(self) -> str:
        return self.skills[self.current_id]

    def text(self, skill_id: str) -> str:
        return self.skills[skill_id]

    def with_skill(self, text: str, parent_id: str | None) -> tuple[State, str, bool]:
        """Register a skill text; returns (state, id, is_new)."""
        sid = text_id(text)
        if sid in self.skills:
            return self, sid, False
        skills = {**self.skills, sid: text}
        parents = {**self.parents, sid: parent_id}
        return attrs.evolve(self, skills=skills, parents=parents), sid, True

    def evolve(self, **changes: object) -> State:
        return attrs.evolve(self, **changes)


def initial_state(config: Config, task: Task) -> State:
    """Omega_0: the initial skill, the 16 stratified batches, the fixed ranking subset, the budget."""
    train = task.split("train")
    if not train:
        raise ConfigError(f"task {task.info.name}: the training split is empty")
    config.selector.check_ready()
    shape = run_shape(config, len(train))
    shape.require_one_round()
    rng = round_rng(config.seed, SETUP_ROUND)
    batches = make_batches(train, config.n_batches, rng)
    if config.batch_order_seed is not None:  # another order; the rest still follows the seed
        batches = make_batches(train, config.n_batches,
                               round_rng(config.batch_order_seed, SETUP_ROUND))
    ranking = ranking_set(rng, samples=train, exclude=frozenset(), size=shape.ranking)
    text = task.info.initial_skill
    sid = text_id(text)
    return State(
        current_id=sid,
        skills={sid: text},
        parents={sid: None},
        saved=(sid,) if config.initial_in_pool else (),  # released: s0 starts in the pool
        ledger=Ledger(entries={}),
        budget=Budget(limit=shape.budget, spent=0, reserve=shape.reserve),
        batches=batches,
        ranking_ids=ranking,
    )
