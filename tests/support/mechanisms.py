"""Which of the released profile's mechanisms a run's events show at work (the released run's closing
note): `python -m tests.support.mechanisms RUN_DIR` prints, for a run directory, how often each
mechanism fired and the run's events counted by type.

Most mechanisms have an event of their own; the rest are read off the events they change: the
save rule's wins >= losses (a screening rejection that the paper would have saved), s0 in the
pool (s0 compared in final selection, refused a seat or pruned), the final-selection floor
(a selection threshold of 2/|train| above 0.010).

`CLOSING_A`, `CLOSING_B` and `CLOSING_C` are the closing note's three toy runs (docs/profiles.md,
"The released profile"): A shows every mechanism but those of `NOT_IN_A`, each of which the run
named there shows. I2 on a batch without failures needs an s_t that fails no sample it ran
(residual pooling borrows any known failure), which only `toy-solvable` (no [X] words) allows;
once s_t solves every sample it ran, no candidate can show a gain over it, so donor salvage
shows on `toy-continuous` only. A branch save needs a candidate with many wins and many losses,
each in two strata or more: the seed's luck, and no toy-continuous seed of 0-39 showed it with
every other mechanism, so run C (another seed) shows that one.
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Callable, Sequence

from attrs import frozen

import stratune_core.state.events as ev
from replay.rundir.serde import TaskSpec
from replay.rundir.trace import RunDir
from stratune_core.config.knobs import Config
from stratune_core.config.profiles import released
from stratune_core.evaluation.gates import REGRESSION_REASONS
from stratune_core.evaluation.rules import Term
from stratune_core.records.enums import ChoiceRule, Reason, Stage, Verdict
from tests.support.cli import ROOT, toy_extensions
from tests.support.toy import ToyTask

Events = Sequence[object]


def _of(events: Events, cls: type) -> list:
    return [e for e in events if isinstance(e, cls)]


def _extended(field: str) -> Callable[[Events], int]:
    return lambda events: sum(1 for e in _of(events, ev.FeedbackExtended) if getattr(e, field))


def _futility(stage: Stage) -> Callable[[Events], int]:
    return lambda events: sum(1 for e in _of(events, ev.FutilityStopped) if e.stage is stage)


def _unsaved_for_losses(events: Events) -> int:
    """Screening rejections with a positive gain, no regression and more losses than wins."""
    screened = {e.candidate_id: e.outcome for e in _of(events, ev.StageResult)
                if e.outcome.stage is Stage.SCREENING}
    count = 0
    for d in _of(events, ev.CandidateDecided):
        out = screened.get(d.candidate_id)
        if (d.verdict is Verdict.REJECTED_SCREENING and out is not None
                and out.stats.gain > 0 and Reason.MORE_LOSSES_THAN_WINS in d.reasons
                and not REGRESSION_REASONS.intersection(d.reasons)):
            count += 1
    return count


def _initial_in_pool(events: Events) -> int:
    (start,) = _of(events, ev.RunStarted)
    s0 = start.initial_skill_id
    named = [e.candidate_id for e in events
             if isinstance(e, ev.FinalComparison | ev.SeatRefused | ev.CandidatePruned)]
    return named.count(s0)


def _final_floor(events: Events) -> int:
    (start,) = _of(events, ev.RunStarted)
    floor = 2 / start.n_train
    return sum(1 for e in _of(events, ev.FinalComparison)
               if floor > 0.010 and e.selection.threshold >= floor - 1e-12)


def _failed(term: Term) -> Callable[[Events], int]:
    """Rules consulted that failed on `term` (`RuleChecked`)."""
    return lambda events: sum(1 for e in _of(events, ev.RuleChecked)
                              if any(c.term is term and not c.passed for c in e.conditions))


def _typed(cls: type) -> Callable[[Events], int]:
    return lambda events: len(_of(events, cls))


# mechanism (its Config field) -> how often the run's events show it firing
MECHANISMS: dict[str, Callable[[Events], int]] = {
    "warmup_solved": _typed(ev.WarmupRound),
    "residual_pooling": _typed(ev.ResidualsPooled),
    "feedback_contrast": _extended("contrast"),
    "feedback_longitudinal": _extended("longitudinal"),
    "feedback_trajectories": _extended("trajectories"),
    "feedback_gold_pairs": _extended("gold_pairs"),
    "feedback_global_stats": _extended("stats"),
    "affordability_guards": _typed(ev.StrategiesNarrowed),
    "verified_fixes": _typed(ev.FixesAnnotated),
    "i2_window": _typed(ev.WindowSubmitted),
    "keep_refinement_on_accept": _typed(ev.RefinementKept),
    "i2_without_failures": lambda events: sum(
        1 for e in _of(events, ev.OperatorChosen) if e.source == ChoiceRule.NO_FAILURES),
    "screen_smoke": _typed(ev.SmokeFailed),
    "screen_futility": _futility(Stage.SCREENING),
    "probation": _typed(ev.ProbationOpened),
    "branch_saves": _typed(ev.CandidateBranched),
    "save_needs_wins": _unsaved_for_losses,
    "guard_severe_max": _failed(Term.GUARD_SEVERE),
    "screen_ready_share": _typed(ev.ScreeningDeferred),
    "ranking_smoke": _typed(ev.RankingSmokeFailed),
    "validation_futility": _futility(Stage.VALIDATION),
    "early_stop_i2": _typed(ev.EarlyStopWaived),
    "initial_in_pool": _initial_in_pool,
    "final_seats / final_min_common": _typed(ev.SeatRefused),
    "final_floor_samples": _final_floor,
    "donor_salvage": _typed(ev.SalvageAttempted),
}


@frozen
class ClosingRun:
    """A `--profile released` toy run of the closing note: `args()` for `tests.support.cli
    train`, and the same run in process (`task()`, `config()`, the optimizer's `style`)."""

    task_name: str
    seed: int
    style: str = "full"
    limit: int = 190
    budget: int = 16  # times |train|
    config_file: str = "tests/support/global_stats.json"  # the livemath_opus setting's statistics

    def args(self) -> tuple[str, ...]:
        return ("--task", self.task_name, "--limit", str(self.limit), "--target",
                "scripted:toy-target", "--optimizer", f"scripted:toy-optimizer?style={self.style}",
                "--profile", "released", "--seed", str(self.seed), "--budget", f"{self.budget}x",
                "--config", str(ROOT / self.config_file))

    def task(self) -> ToyTask:
        return toy_extensions().tasks[self.task_name](TaskSpec(spec=self.task_name, limit=self.limit))

    def config(self) -> Config:
        return released().replace(seed=self.seed, feedback_global_stats=True,
                                  budget_multiplier=float(self.budget))


CLOSING_A = ClosingRun(task_name="toy-continuous", seed=21)
CLOSING_B = ClosingRun(task_name="toy-solvable", seed=13)  # no [X] words: s_t solves them all
CLOSING_C = ClosingRun(task_name="toy-continuous", seed=0)
CLOSING = {"A": CLOSING_A, "B": CLOSING_B, "C": CLOSING_C}
# what run A does not show -> the run that shows it
NOT_IN_A = {"affordability_guards": "C", "i2_without_failures": "B", "branch_saves": "C",
            "guard_severe_max": "B", "early_stop_i2": "C"}

def fired(events: Events) -> dict[str, int]:
    return {name: count(events) for name, count in MECHANISMS.items()}


def by_type(events: Events) -> Counter[str]:
    return Counter(type(e).__name__ for e in events)


def main(argv: Sequence[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m tests.support.mechanisms RUN_DIR", file=sys.stderr)
        return 2
    _, events = RunDir.at(argv[0]).read_events()
    print("| mechanism (Config field) | fired |\n|---|---|")
    for name, count in fired(events).items():
        print(f"| `{name}` | {count} |")
    print("\n| event | count |\n|---|---|")
    for name, count in sorted(by_type(events).items(), key=lambda kv: (-kv[1], kv[0])):
        print(f"| `{name}` | {count} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
