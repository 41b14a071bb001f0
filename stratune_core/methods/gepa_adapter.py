"""The bridge between the `gepa` package and our run: GEPA's adapter (`evaluate`,
`make_reflective_dataset`), its reflection LM, its stop condition and the callback that turns
its iterations into our events; `require_gepa`, the package or how to install it.

Every target execution GEPA asks for goes through `methods.executions.execute` (ledger,
admission control, attribution): a group that would pass B is refused and `BudgetSpent` ends
GEPA's loop. Every reflection goes through `optimizer.ask`, so the cache and the usage table
see it. GEPA catches and logs its reflection LM's exceptions and carries on; a failed model
call must end the run instead (a rerun resumes from the cache), so the failure is kept and
raised at GEPA's next target execution or when it returns.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from llm_cache.records import CallKind
from stratune_core.methods.executions import execute, scored
from stratune_core.methods.gepa_events import GepaIteration
from stratune_core.methods.gepa_prompts import COMPONENT, REFLECTION_SYSTEM, record
from stratune_core.methods.state import MethodState
from stratune_core.prompts.optimizer import ask, optimizer_request
from stratune_core.records.enums import StopReason
from stratune_core.records.errors import ConfigError
from stratune_core.records.ids import text_id
from stratune_core.records.purposes import MethodPurpose
from stratune_core.state.context import Env
from stratune_core.state.events import Event


def require_gepa() -> Any:
    """The `gepa` package, or a one-line error saying how to install it."""
    try:
        import gepa
    except ImportError:
        raise ConfigError("--method gepa / --generator gepa: the gepa package is not installed; "
                          "pip install 'stratune[gepa]'", field="method") from None
    return gepa


class BudgetSpent(Exception):  # noqa: N818  (the end of GEPA's loop, not an error)
    """A group of executions did not fit in B: GEPA's loop stops here."""


@attrs.define
class Chunk:
    """The events of one GEPA iteration (0: the seed's validation) and the state after it."""

    state: MethodState
    events: list[Event]


@attrs.define
class Bridge:
    """GEPA's adapter, reflection LM, stopper and callback in one object: they share our run
    state, which GEPA's loop advances through them."""

    env: Env
    state: MethodState
    fit: tuple[str, ...]
    validation: tuple[str, ...]
    idle_limit: int  # iterations in a row that spend nothing before GEPA is stopped
    max_rounds: int | None = None  # `--max-rounds`: GEPA iterations
    chunks: list[Chunk] = attrs.field(factory=list)
    pending: list[Event] = attrs.field(factory=list)
    parent_id: str | None = None
    proposal: str | None = None  # the skill GEPA proposed in the current iteration
    minibatch_scores: dict[bool, tuple[float, ...]] = attrs.field(factory=dict)  # child? ->
    refused: bool = False
    idle: int = 0
    spent_at_start: int = 0
    pool: list[str] = attrs.field(factory=list)  # skill ids of GEPA's candidates, in its order
    failure: BaseException | None = None
    # GEPA reads `propose_new_texts` off the adapter: None means its own reflective proposer
    propose_new_texts: Any = None

    # -- the adapter -------------------------------------------------------------------------
    def evaluate(self, batch: list[str], candidate: dict[str, str],
                 capture_traces: bool = False) -> Any:
        from gepa import EvaluationBatch

        self._raise_failure()
        text = candidate[COMPONENT]
        sid = self._register(text)
        val = set(self.validation)
        purpose = (MethodPurpose.VALIDATION if batch and all(x in val for x in batch)
                   else MethodPurpose.ROLLOUT)
        before = self.state.budget.spent
        self.state, events, runs = execute(self.state, self.env, sid, batch, purpose=purpose)
        self.pending.extend(events)
        if runs is None:
            self.refused = True
            raise BudgetSpent(f"{purpose.value}: {len(batch)} executions do not fit")
        executions = [self.state.ledger.get(sid, x) for x in batch]
        done = [e for e in executions if e is not None]
        return EvaluationBatch(
            outputs=[e.output for e in done], scores=[e.score for e in done],
            trajectories=list(done) if capture_traces else None,
            num_metric_calls=self.state.budget.spent - before)

    def make_reflective_dataset(self, candidate: dict[str, str], eval_batch: Any,
                                components_to_update: list[str],
                                ) -> Mapping[str, Sequence[Mapping[str, Any]]]:
        records = [record(self.env, e) for e in eval_batch.trajectories or ()]
        return {name: records for name in components_to_update}

    # -- the reflection LM -------------------------------------------------------------------
    def __call__(self, prompt: str | list[dict[str, Any]]) -> str:
        self._raise_failure()  # GEPA retries a failed reflection: the failure stands
        text = prompt if isinstance(prompt, str) else "\n\n".join(
            str(m.get("content", "")) for m in prompt)
        try:
            return ask(self.env, [optimizer_request(self.env, text, kind=CallKind.REFLECTION,
                                                    system=REFLECTION_SYSTEM)])[0]
        except BaseException as exc:
            self.failure = exc
            raise

    # -- the stop condition ------------------------------------------------------------------
    def should_stop(self, _gepa_state: Any) -> bool:
        self._raise_failure()
        return self.stop_reason() is not None

    def stop_reason(self) -> StopReason | None:
        """Why GEPA should stop before its metric-call budget; None: it need not."""
        if self.refused:
            return StopReason.BUDGET
        if self.max_rounds is not None and self.state.round >= self.max_rounds:
            return StopReason.MAX_ROUNDS
        # a whole epoch of minibatches that spent nothing proposed nothing new: under a
        # deterministic cache GEPA would go on drawing the same answers for free
        return StopReason.NO_PROGRESS if self.idle >= self.idle_limit else None

    # -- the callback ------------------------------------------------------------------------
    def on_valset_evaluated(self, event: Mapping[str, Any]) -> None:
        if event["iteration"] == 0:  # the seed: its validation closes chunk 0
            self.pool.append(self._register(event["candidate"][COMPONENT]))
            self._validated(self.pool[-1])
            self._close()

    def on_iteration_start(self, event: Mapping[str, Any]) -> None:
        self.state = self.state.evolve(round=event["iteration"])
        self.spent_at_start = self.state.budget.spent
        self.parent_id = self.proposal = None
        self.minibatch_scores = {}

    def on_evaluation_end(self, event: Mapping[str, Any]) -> None:
        child = event["candidate_idx"] is None
        self.minibatch_scores[child] = tuple(float(s) for s in event["scores"])

    def on_candidate_selected(self, event: Mapping[str, Any]) -> None:
        self.parent_id = self._register(event["candidate"][COMPONENT])

    def on_proposal_end(self, event: Mapping[str, Any]) -> None:
        text = event["new_instructions"].get(COMPONENT)
        if text is not None:
            self.proposal = self._register(text)

    def on_iteration_end(self, event: Mapping[str, Any]) -> None:
        if self.refused or self.failure is not None:
            return  # the run ends here; the refusal is already among the pending events
        self.pending.append(self._iteration(event["state"]))
        self.idle = 0 if self.state.budget.spent > self.spent_at_start else self.idle + 1
        self._close()

    # -- helpers -----------------------------------------------------------------------------
    def _raise_failure(self) -> None:
        if self.failure is not None:
            raise self.failure

    def _register(self, text: str) -> str:
        self.state, sid, added = self.state.add_skill(text, self.parent_id)
        self.pending.extend(added)
        return sid

    def _validated(self, skill_id: str) -> float:
        """A pool member's internal validation score (GEPA's average), as a `SkillScored`."""
        mean, event = scored(self.state, self.env, skill_id, self.validation,
                             purpose=MethodPurpose.VALIDATION)
        self.pending.append(event)
        return mean

    def _close(self) -> None:
        self.chunks.append(Chunk(state=self.state, events=self.pending))
        self.pending = []

    def _iteration(self, gepa_state: Any) -> GepaIteration:
        trace: dict[str, Any] = gepa_state.full_program_trace[-1]
        parent_idx = trace.get("selected_program_candidate")
        parent = self.pool[parent_idx] if parent_idx is not None else self.pool[0]
        minibatch = tuple(self.fit[i] for i in trace.get("subsample_ids", ()))
        before = self.minibatch_scores.get(False, ())
        after = self.minibatch_scores.get(True, ())
        candidate = self.proposal
        added = len(gepa_state.program_candidates) > len(self.pool)
        validation = None
        if added:
            new = gepa_state.program_candidates[len(self.pool)][COMPONENT]
            self.pool.append(text_id(new))
            validation = self._validated(self.pool[-1])
        front = sorted({i for ids in gepa_state.get_pareto_front_mapping().values() for i in ids})
        detail = ""
        if not minibatch:
            detail = "no minibatch"
        elif candidate is None:
            perfect = before and all(s >= 1.0 for s in before)
            detail = "minibatch already perfect" if perfect else "no proposal"
        return GepaIteration(round=self.state.round, parent_id=parent, minibatch_ids=minibatch,
                             parent_scores=before, candidate_id=candidate,
                             candidate_scores=after, accepted=added, validation=validation,
                             front=tuple(self.pool[i] for i in front), detail=detail)
