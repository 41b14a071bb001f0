"""What the Python API's calls return and raise."""

from __future__ import annotations

from pathlib import Path

from attrs import field, frozen

from replay.api.runs import Cost, Round, Run
from stratune_core.records.errors import StraTuneError
from stratune_core.state.events import Event


class RunStopped(StraTuneError):
    """A stop control (cost cap, timeout, STOP file, a closed `iterate`) ended the run; the
    same call resumes it."""


class ModelCallFailed(StraTuneError):
    """A model call failed after its retries; events and paid calls are kept, the same call
    resumes the run."""


class ReplayFailed(StraTuneError):
    """The recomputed run differs from its trace; the message names the first difference."""


@frozen(kw_only=True)
class OptimizeResult:
    final_skill: str
    final_id: str
    initial_skill: str
    trajectory: tuple[Round, ...] = field(converter=tuple)
    cost: Cost
    trace: Path  # the run directory: `stratune view`, `replay`, `compare` read it
    stop_reason: str
    spent: int
    budget: int
    test_scores: dict[str, float] | None  # with test_eval: skill id -> mean test score
    skill_folder: Path | None  # with skill=DIR: the learned skill as an Agent Skills folder
    run: Run

    @classmethod
    def of(cls, run: Run, skill_folder: Path | None) -> OptimizeResult:
        assert run.final_skill is not None and run.final_id is not None
        assert run.initial_skill is not None and run.stop_reason is not None
        return cls(final_skill=run.final_skill, final_id=run.final_id,
                   initial_skill=run.initial_skill, trajectory=run.rounds, cost=run.cost,
                   trace=run.path, stop_reason=run.stop_reason, spent=run.spent,
                   budget=run.budget or 0, test_scores=run.test_scores,
                   skill_folder=skill_folder, run=run)


@frozen(kw_only=True)
class Update:
    """What `iterate` yields after each step of the run; the last one carries the result."""

    round: int  # rounds done so far
    spent: int
    budget: int
    events: tuple[Event, ...] = field(converter=tuple)
    cost_usd: float
    result: OptimizeResult | None = None


@frozen(kw_only=True)
class ReplayResult:
    path: Path
    message: str  # the line `stratune replay` prints
    events: int | None  # a training run's events and digest (None for an evaluation dir)
    digest: str | None
