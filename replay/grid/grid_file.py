"""Reading a grid file (TOML, with the stdlib `tomllib`) into a `GridSpec` (`replay/grid/spec.py`
shows its shape): every key checked, every error one exit-2 line naming the file and the key."""

from __future__ import annotations

import tomllib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from llm_cache.spec import MAX_CONCURRENCY
from replay.grid.spec import (
    FLAGS,
    MAX_SEED,
    MAX_SEEDS,
    NAME,
    NAME_MAX,
    NOT_SETTABLE,
    PAIR_KEYS,
    RUN_KEYS,
    TASK_KEYS,
    TOP_KEYS,
    Ablation,
    GridError,
    GridSpec,
    PairEntry,
    TaskEntry,
    refuse_same_cells,
)
from replay.input_files import number_too_long, read_regular, too_deep, too_many_digits
from replay.run.method_options import settings_of
from replay.rundir.serde import TaskSpec
from replay.tasks.registry import BUILT_IN
from stratune_core.config.layers import config_keys
from stratune_core.records.errors import ConfigError, StraTuneError
from stratune_core.records.method_spec import (
    MethodSpec,
    default_method,
    default_spec,
    generator_names,
    hybrid_spec,
    takes_generator,
)


def load_grid(path: str | Path) -> GridSpec:
    file = Path(path)
    try:
        data = tomllib.loads(read_regular(file, "grid file").decode("utf-8"))
    except StraTuneError as exc:
        raise GridError(str(exc)) from None
    except RecursionError:
        raise GridError(str(too_deep(str(file)))) from None
    except UnicodeDecodeError as exc:
        raise GridError(f"{file}: not UTF-8 text (byte 0x{exc.object[exc.start]:02x} at offset "
                        f"{exc.start}); give a TOML grid file") from None
    except tomllib.TOMLDecodeError as exc:
        raise GridError(f"{file}: not valid TOML ({exc})") from None
    except ValueError as exc:  # a number of more digits than Python converts
        raise number_too_long(str(file), GridError) if too_many_digits(exc) else exc from None
    return parse_grid(data, file)


def parse_grid(data: Mapping[str, Any], file: Path) -> GridSpec:
    reader = _Reader(file)
    reader.known(data, TOP_KEYS, "the top level")
    tasks = tuple(reader.task(name, entry) for name, entry in reader.table(data, "tasks").items())
    pairs = tuple(reader.pair(name, entry) for name, entry in reader.table(data, "pairs").items())
    ablations = tuple(reader.ablation(name, entry)
                      for name, entry in reader.table(data, "ablations").items())
    ablations += reader.methods(data.get("methods", []), {a.name for a in ablations})
    ablations += reader.generators(data.get("generators", []), {a.name for a in ablations})
    refuse_same_cells(ablations, reader.error)
    names = {a.name for a in ablations}
    for ablation in ablations:
        if ablation.replay_of is not None and ablation.replay_of not in names:
            raise reader.error(f"ablations.{ablation.name}.selector",
                               f"replay:{ablation.replay_of} names no ablation of this grid "
                               f"({', '.join(sorted(names))}) and no run directory")
    defaults = reader.overrides(data.get("defaults", {}), "defaults", allow_run_keys=False)
    budget = data.get("budget")
    if budget is not None:
        defaults = (*defaults, *reader.budget(budget, "budget"))
    return GridSpec(
        path=file, tasks=tasks, pairs=pairs, ablations=ablations,
        seeds=reader.seeds(data.get("seeds", 1)),
        test_eval=reader.typed(data, "test_eval", bool, False),
        profile=reader.typed(data, "profile", str, "paper"),
        config_file=reader.path(data["config"], "config") if "config" in data else None,
        concurrency=reader.positive(data.get("concurrency", 8), "concurrency", MAX_CONCURRENCY),
        defaults=defaults,
        max_connections=tuple((name, reader.positive(n, f"max_connections.{name}"))
                              for name, n in reader.table(data, "max_connections",
                                                          required=False).items()),
    )


class _Reader:
    def __init__(self, file: Path) -> None:
        self.file = file
        self.root = file.resolve().parent

    def error(self, key: str, message: str) -> GridError:
        return GridError(f"{self.file}: {key}: {message}")

    def known(self, data: Mapping[str, Any], keys: tuple[str, ...], where: str) -> None:
        for key in data:
            if key not in keys:
                raise GridError(f"{self.file}: unknown key {key!r} in {where}; "
                                f"use {', '.join(keys)}")

    def table(self, data: Mapping[str, Any], key: str, *, required: bool = True
              ) -> dict[str, Any]:
        value = data.get(key, {})
        if not isinstance(value, dict):
            raise self.error(key, f"expected a table ([{key}.NAME] sections)")
        if required and not value:
            raise self.error(key, f"the grid needs at least one entry in [{key}]")
        for name in value:
            if not NAME.match(name):
                raise self.error(f"{key}.{name[:40]}", "names may use letters, digits and "
                                 f". _ + = - (at most {NAME_MAX} characters)")
        return value

    def typed(self, data: Mapping[str, Any], key: str, kind: type, default: Any) -> Any:
        value = data.get(key, default)
        if not isinstance(value, kind):
            raise self.error(key, f"expected {kind.__name__}, got {value!r}")
        return value

    def positive(self, value: Any, key: str, at_most: int | None = None) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise self.error(key, f"expected a positive integer, got {value!r}")
        if at_most is not None and value > at_most:
            raise self.error(key, f"at most {at_most}, got {value}")
        return value

    def path(self, value: Any, key: str) -> str:
        if not isinstance(value, str) or not value:
            raise self.error(key, f"expected a path, got {value!r}")
        return str((self.root / Path(value).expanduser()).resolve())

    def seeds(self, value: Any) -> tuple[int, ...]:
        if isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= MAX_SEEDS:
            return tuple(range(value))
        if (isinstance(value, list) and value and len(set(value)) == len(value)
                and len(value) <= MAX_SEEDS
                and all(isinstance(s, int) and not isinstance(s, bool) and 0 <= s <= MAX_SEED
                        for s in value)):
            return tuple(value)
        raise self.error("seeds", f"expected a count (3, at most {MAX_SEEDS}) or distinct "
                                  f"seeds ([0, 1, 2], each below 2^63), got {value!r}")

    def task(self, name: str, entry: Any) -> TaskEntry:
        key = f"tasks.{name}"
        if not isinstance(entry, dict):
            raise self.error(key, "expected a table with `task = ...`")
        self.known(entry, TASK_KEYS, f"[{key}]")
        if not isinstance(entry.get("task"), str):
            raise self.error(f"{key}.task", "required: a task name or a path to a JSONL task")
        spec = entry["task"]
        # a custom task beside the grid file; a built-in's name ("demo") is never a folder's
        if spec not in BUILT_IN and (self.root / spec).exists():
            spec = str((self.root / spec).resolve())
        elif "/" in spec or spec.endswith(".jsonl"):
            raise self.error(f"{key}.task", f"{self.root / spec} not found (a task path is "
                                            "relative to the grid file)")
        limit = entry.get("limit")
        if limit is not None:
            limit = self.positive(limit, f"{key}.limit")
        return TaskEntry(
            name=name,
            spec=TaskSpec(spec=spec, scorer=entry.get("scorer"),
                          placement=entry.get("placement", "system"), limit=limit),
            data_dir=self.path(entry["data"], f"{key}.data") if "data" in entry else None,
        )

    def pair(self, name: str, entry: Any) -> PairEntry:
        key = f"pairs.{name}"
        if not isinstance(entry, dict):
            raise self.error(key, "expected a table with target and optimizer")
        self.known(entry, PAIR_KEYS, f"[{key}]")
        for role in PAIR_KEYS:
            if not isinstance(entry.get(role), str):
                raise self.error(f"{key}.{role}", "required: a model spec")
        return PairEntry(name=name, target=entry["target"], optimizer=entry["optimizer"])

    def budget(self, value: Any, key: str) -> tuple[tuple[str, Any], ...]:
        from replay.run.options import parse_budget

        if isinstance(value, int) and not isinstance(value, bool):
            value = str(value)
        if not isinstance(value, str):
            raise self.error(key, f"expected N or \"Kx\", got {value!r}")
        try:
            return tuple(parse_budget(value).items())
        except ConfigError as exc:
            raise self.error(key, str(exc)) from None

    def overrides(self, entry: Any, key: str, *, allow_run_keys: bool
                  ) -> tuple[tuple[str, Any], ...]:
        if not isinstance(entry, dict):
            raise self.error(key, "expected a table of Config fields or train flags")
        fields = config_keys()
        out: list[tuple[str, Any]] = []
        for raw, value in entry.items():
            name = raw.replace("-", "_")
            if allow_run_keys and name in RUN_KEYS:
                continue
            if name in FLAGS:
                if value is not True:
                    raise self.error(f"{key}.{raw}", "a flag takes `true`")
                out.append((FLAGS[name], False))
            elif name in fields and name not in NOT_SETTABLE:
                out.append((name, value))
            else:
                raise self.error(f"{key}.{raw}", "not a Config field or train flag (see "
                                 "stratune_core/config/knobs.py; seeds and models are set by the grid)")
        return tuple(out)

    def ablation(self, name: str, entry: Any) -> Ablation:
        key = f"ablations.{name}"
        overrides = list(self.overrides(entry, key, allow_run_keys=True))
        replay_of = None
        for i, (field_name, value) in enumerate(overrides):
            if field_name == "selector" and isinstance(value, str) and value.startswith("replay:"):
                source = value.removeprefix("replay:")
                if NAME.match(source) and not (self.root / source).exists():
                    replay_of = source  # resolved per cell once the output directory is known
                else:
                    overrides[i] = ("selector", "replay:" + self.path(source, f"{key}.selector"))
        if "budget" in entry:
            overrides += self.budget(entry["budget"], f"{key}.budget")
        profile = entry.get("profile")
        if profile is not None and not isinstance(profile, str):
            raise self.error(f"{key}.profile", f"expected a profile name, got {profile!r}")
        method = self.method(entry.get("method", "stratune"), f"{key}.method")
        allowed = settings_of(method)
        if allowed is not None:
            extra = sorted(f for f, _ in overrides if f not in allowed)
            if extra or profile is not None:
                raise self.error(f"{key}.{(extra or ['profile'])[0]}",
                                 f"method {method.method} has no such setting (it takes "
                                 f"{', '.join(sorted(allowed))}); remove it")
        if "generator" in entry:
            method = self.hybrid(entry["generator"], method, overrides, f"{key}.generator")
        return Ablation(
            name=name, overrides=tuple(overrides), profile=profile, replay_of=replay_of,
            method=method,
            config_file=self.path(entry["config"], f"{key}.config") if "config" in entry else None,
        )

    def method(self, value: Any, key: str) -> MethodSpec:
        if not isinstance(value, str):
            raise self.error(key, f"expected a method name, got {value!r}")
        try:
            return default_spec(value)
        except ConfigError as exc:
            raise self.error(key, str(exc).removeprefix("--method: ")) from None

    def hybrid(self, value: Any, method: MethodSpec, overrides: list[tuple[str, Any]],
               key: str) -> MethodSpec:
        """A StraTune ablation whose candidates another method generates (Table 4)."""
        if value not in generator_names():
            raise self.error(key, f"expected one of {' | '.join(generator_names())}, got "
                             f"{value!r}")
        if not takes_generator(method):
            raise self.error(key, f"method {method.method} has no generator (it is a StraTune "
                             "option); remove it")
        chosen = sorted(f for f, _ in overrides if f in ("selector", "operator", "forms"))
        if chosen:
            raise self.error(key, f"the generator replaces the operator choice, so "
                             f"{chosen[0]} has nothing to choose; remove one of them")
        return hybrid_spec(value)

    def generators(self, value: Any, taken: set[str]) -> tuple[Ablation, ...]:
        """`generators = [...]`: one hybrid ablation per generator, named `<generator>-hybrid`."""
        return self._axis("generators", "generator", value, taken, lambda name, key: (
            f"{name}-hybrid", self.hybrid(name, default_method(), [], key)))

    def methods(self, value: Any, taken: set[str]) -> tuple[Ablation, ...]:
        """`methods = [...]`: one ablation per method, named after it (StraTune's own cells are
        the [ablations])."""
        return self._axis("methods", "method", value, taken,
                          lambda name, key: (name, self.method(name, key)))

    def _axis(self, axis: str, what: str, value: Any, taken: set[str],
              make: Callable[[str, str], tuple[str, MethodSpec]]) -> tuple[Ablation, ...]:
        """A list of names, each made into one ablation (its name, its method) by `make`."""
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise self.error(axis, f"expected a list of {what} names, got {value!r}")
        out = []
        for i, name in enumerate(value):
            ablation, method = make(name, f"{axis}[{i}]")
            if ablation in taken:
                raise self.error(f"{axis}[{i}]", f"{ablation!r} is also an ablation's name; "
                                 f"rename the ablation or drop the {what} from the list")
            taken.add(ablation)
            out.append(Ablation(name=ablation, method=method))
        return tuple(out)
