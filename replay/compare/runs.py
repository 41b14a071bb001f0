"""Run directories as `compare` sees them: manifest, typed events (read by the same converter
as `view` and `replay`, so a renamed event field fails loudly), usage, test scores, and
the grid coordinates of a cell; labels that follow the paper (method names of Tables 1-3, 6, 7,
dataset names) and grouping by any manifest field (`--by`)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from attrs import frozen

from replay.rundir import seal
from replay.rundir.serde import Manifest, manifest_to_data
from replay.rundir.trace import CELL_FILE, RunDir
from replay.tasks.registry import DATASETS
from stratune_core.config.knobs import Config
from stratune_core.records.enums import FormMenu
from stratune_core.records.errors import ConfigError
from stratune_core.records.form_spec import FORM_SPECS
from stratune_core.records.method_spec import Method, default_method
from stratune_core.round.registry import METHODS, entry_of, hybrid_label
from stratune_core.selection.selectors.scripted import ReplaySequence
from stratune_core.state.events import Event, RunFinished, RunStarted

E = TypeVar("E")

METHOD = entry_of(default_method()).label
# The baselines' labels, by the method a manifest records, in the registry's order (the paper's,
# Table 2's rows): the methods table and every table by method follow it.
BASELINE_LABELS: Mapping[Method, str] = {m: e.label for m, e in METHODS.items() if e.baseline}
# Table 4's hybrids, by the method whose candidate generation runs in StraTune's rounds
HYBRID_LABELS: Mapping[Method, str] = {m: e.hybrid for m, e in METHODS.items()
                                       if e.hybrid is not None}
# a `forms` ablation that offers one form alone, by its menu ("F4 only")
MENU_LABELS: Mapping[FormMenu, str] = {s.menu: s.only_label for s in FORM_SPECS
                                       if s.menu is not None}
SELECTOR_LABELS = {
    "fixed:I1": "I1 only", "fixed:I2": "I2 only", "fixed:I3": "I3 only", "random": "Rand.",
    "rotation": "Rot.", "once": "Once", "bandit:epsilon_greedy": "Bandit, ε-greedy",
    "bandit:ucb1": "Bandit, UCB1", "bandit:thompson": "Bandit, Thompson",
}
REPLAY = "Replay"  # the paper's row: the recorded sequence on batches in another order
ABLATION_FIELDS = ("selector", "forms", "operator", "history", "validation", "final_selection")


@frozen(kw_only=True)
class Run:
    path: Path
    record: Manifest  # typed
    manifest: dict[str, Any]  # as JSON, for `--by`'s dotted paths
    events: tuple[Event, ...]
    usage: dict[str, Any] | None
    evaluation: dict[str, Any] | None
    coords: dict[str, Any] | None  # a grid cell's task / pair / ablation / seed
    check: str = ""  # the seal's verdict on the run's files (`replay.rundir.seal.Status.mark`)

    @property
    def finished(self) -> bool:
        return self.record.finished and self.last(RunFinished) is not None

    def last(self, kind: type[E]) -> E | None:
        return next((e for e in reversed(self.events) if isinstance(e, kind)), None)

    def of_type(self, kind: type[E]) -> list[E]:
        return [e for e in self.events if isinstance(e, kind)]

    def score(self, which: str) -> float | None:
        """Test score (0-100) of the final or the initial skill; None without one."""
        if self.evaluation is None:
            return None
        if which == "final":
            end = self.last(RunFinished)
            skill = None if end is None else end.final_id
        else:
            start = self.last(RunStarted)
            skill = None if start is None else start.initial_skill_id
        value = self.evaluation.get("scores", {}).get(skill)
        return None if value is None else 100.0 * value

    @property
    def dataset(self) -> str:
        name = (self.coords or {}).get("task")
        if name is None:
            started = self.last(RunStarted)
            name = started.task if started else self.record.task.spec
        return DATASETS.get(str(name).lower(), str(name))

    @property
    def pair(self) -> str:
        config = self.record.config
        return f"Target: {config.target_model} · Optimizer: {config.optimizer_model}"

    @property
    def name(self) -> str:
        if self.coords is not None:
            return str(self.coords.get("id", self.path.name))
        return str(self.path)


def method_of(run: Run) -> str:
    """The paper's name for what this run changes against the full method; else the grid's
    ablation name, else the changed fields."""
    method = run.record.method
    if entry_of(method).baseline:  # its config holds StraTune's defaults: no ablation
        return entry_of(method).label
    if (hybrid := hybrid_label(method)) is not None:
        return hybrid
    config, paper = run.record.config, Config()
    diffs = [f for f in ABLATION_FIELDS if getattr(config, f) != getattr(paper, f)]
    profile = run.record.profile
    if not diffs:
        return METHOD if profile == "paper" else f"{METHOD} ({profile} profile)"
    if len(diffs) == 1 and profile == "paper":
        label = _single(diffs[0], getattr(config, diffs[0]))
        origin = run.record.replay_of
        if label == REPLAY and origin is not None and origin.same_batches:
            # not the paper's Replay: the recorded batches again, in the recorded order
            return f"{REPLAY} (same batches as its source)"
        if label is not None:
            return label
    if run.coords is not None and "ablation" in run.coords:
        return str(run.coords["ablation"])
    return ", ".join(f"{f}={run.manifest['config'][f]}" for f in diffs)  # as JSON spells it


def _single(field_name: str, value: Any) -> str | None:
    if field_name == "selector":
        return REPLAY if isinstance(value, ReplaySequence) else SELECTOR_LABELS.get(str(value))
    if field_name == "forms" and value is not FormMenu.ALL:
        return MENU_LABELS.get(value)
    if field_name == "operator":
        return str(value)  # I3+F3
    return {"history": "No hist.", "validation": "No valid.",
            "final_selection": "No final sel."}.get(field_name)


def field_value(run: Run, path: str) -> Any:
    """`--by` fields: a dotted path into the manifest (target, seed, profile, task.spec,
    config.<field>) or the grid coordinates (grid.task, grid.pair, grid.ablation)."""
    if path.startswith("grid."):
        return (run.coords or {}).get(path.removeprefix("grid."))
    node: Any = run.manifest
    for part in path.split("."):
        if not isinstance(node, dict) or part not in node:
            raise ConfigError(f"--by {path}: not a manifest field; use e.g. config.selector, "
                              "profile, target, seed, task.spec or grid.ablation")
        node = node[part]
    return node


def label_of(run: Run, by: Sequence[str]) -> str:
    if not by:
        return method_of(run)
    return ", ".join(f"{path}={field_value(run, path)}" for path in by)


def find_run_dirs(paths: Iterable[str | Path]) -> list[Path]:
    found: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if not path.exists():
            raise ConfigError(f"{path}: not found; give run directories (train --out) or grid "
                              "directories (grid --out)")
        if (path / "manifest.json").is_file():
            found.append(path)
            continue
        found.extend(sorted(p.parent for p in path.rglob("manifest.json")
                            if "cache" not in p.relative_to(path).parts))
    if not found:
        raise ConfigError(f"no run directories (with manifest.json) under {', '.join(map(str, paths))}")
    return found


def load_runs(paths: Iterable[str | Path]) -> list[Run]:
    runs = []
    for path in find_run_dirs(paths):
        run_dir = RunDir.at(path)
        record = run_dir.read_manifest()
        coords_file = path / CELL_FILE
        coords = json.loads(coords_file.read_text(encoding="utf-8")) if coords_file.is_file() \
            else None
        runs.append(Run(path=path, record=record, manifest=manifest_to_data(record),
                        events=run_dir.read_events(texts=False)[1],
                        usage=run_dir.read_json(run_dir.usage),
                        evaluation=run_dir.read_json(run_dir.evaluation), coords=coords,
                        check=seal.status(path).mark))
    _refuse_copies(runs)
    return runs


def _refuse_copies(runs: Sequence[Run]) -> None:
    """One recorded run in two directories (a grid cell copied beside itself, a run copied
    into a grid) would count its scores twice: the same cell coordinates (its id aside, which
    an edit moves with the copy), or none, with the same events and the same definition is one
    run."""
    seen: dict[tuple[Any, ...], Path] = {}
    for run in runs:
        place = None if run.coords is None else json.dumps(
            {k: v for k, v in run.coords.items() if k != "id"}, sort_keys=True, default=str)
        key = (place, run.record.event_digest,
               json.dumps(run.record.run_identity(), sort_keys=True, default=str))
        if key in seen:
            if seen[key].resolve() == run.path.resolve():
                raise ConfigError(f"{run.path}: given twice; compare counts each run once: "
                                  "give it once")
            what = "grid cell" if place is not None else "run"
            raise ConfigError(f"{run.path}: a copy of the {what} in {seen[key]} (the same "
                              "events and definition); compare counts each run once: leave "
                              "one of them out, or remove the copy")
        seen[key] = run.path


def checks(runs: Sequence[Run]) -> str:
    """`3 sealed, 1 ALTERED`: how many runs got each seal verdict."""
    counts: dict[str, int] = {}
    for run in runs:
        counts[run.check] = counts.get(run.check, 0) + 1
    return ", ".join(f"{n} {mark}" for mark, n in sorted(counts.items()))
