"""The events every baseline may emit. A baseline run is framed by the same `RunStarted`,
`SkillAdded` and `RunFinished` as a StraTune run; these say what happened in between. A
method's own events live in its own module (`methods/<m>_events.py`) and reach the trace's event
union through its registry entry (`round/registry.TRACE_EVENTS`). Don't subclass these.
"""

from __future__ import annotations

from attrs import field, frozen

from stratune_core.records.method_spec import Generator, Method
from stratune_core.records.purposes import MethodPurpose, UpdateVerdict


@frozen(kw_only=True)
class MethodStarted:
    method: Method = field(converter=Method)
    settings: str  # the method's settings, as the manifest spells them (JSON)


@frozen(kw_only=True)
class SplitMade:
    """The method's own split of the training set (80/20: updates, internal validation)."""

    fit_ids: tuple[str, ...] = field(converter=tuple)
    validation_ids: tuple[str, ...] = field(converter=tuple)


@frozen(kw_only=True)
class TargetExecuted:
    """Target executions paid for one purpose: one unit of budget per id in `sample_ids`;
    `reused` pairs were answered by the ledger for free."""

    round: int
    purpose: MethodPurpose = field(converter=MethodPurpose)
    skill_id: str
    sample_ids: tuple[str, ...] = field(converter=tuple)
    reused: int = 0
    spent: int


@frozen(kw_only=True)
class ExecutionsRefused:
    """A group of executions did not fit in what is left of the budget; nothing was run."""

    round: int
    purpose: MethodPurpose = field(converter=MethodPurpose)
    needed: int
    remaining: int


@frozen(kw_only=True)
class SkillScored:
    round: int
    skill_id: str
    purpose: MethodPurpose = field(converter=MethodPurpose)
    n: int
    mean: float
    solved: int


@frozen(kw_only=True)
class UpdateDecided:
    """A proposed skill (a method's update step) and what became of it."""

    round: int
    parent_id: str
    candidate_id: str | None
    verdict: UpdateVerdict = field(converter=UpdateVerdict)
    score: float | None = None
    reference_score: float | None = None
    detail: str = ""


@frozen(kw_only=True)
class FinalChosen:
    """The method's final choice among scored skills (`scores` in the order of `skill_ids`)."""

    skill_ids: tuple[str, ...] = field(converter=tuple)
    scores: tuple[float, ...] = field(converter=tuple)
    final_id: str


@frozen(kw_only=True)
class GeneratorProposed:
    """A hybrid of Table 4 (`--generator`): what another method's candidate generation made of
    the current skill and the round's batch. `sample_ids`: the executions it was shown;
    `candidate_id` None: it proposed nothing (`detail` says why)."""

    round: int
    generator: Generator = field(converter=Generator)
    sample_ids: tuple[str, ...] = field(converter=tuple)
    candidate_id: str | None = None
    detail: str = ""


# the shared events that close one step of a baseline's run, which the progress display counts
# (with the steps among each method's own events: `round/registry.STEP_EVENTS`)
STEP_EVENTS = (UpdateDecided, FinalChosen)
