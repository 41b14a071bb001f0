"""Config layering: a profile, then a task's preset, then the user's file, then the command
line's flags, later layers winning field by field.

Every layer is plain data (a file's JSON object, the flags' values), and each value is checked
by the same code whatever its layer: its JSON type by the converter, its range by the Config
field's own converter and validator, as soon as its layer is applied (a bad value in a file is
reported even when a flag replaces it). Rules between fields are checked once, on the result.
An error is one line naming the layer that set the offending field, and the field.
"""

from __future__ import annotations

import functools
import typing
from collections.abc import Mapping, Sequence
from typing import Any

import attrs
import cattrs
from attrs import field, frozen

from stratune_core.config import Config, profile
from stratune_core.errors import ConfigError
from stratune_core.records import TaskInfo
from stratune_core.serde import one_line, structure, unstructure


@frozen(kw_only=True)
class Layer:
    """Field values from one source; `where` names it in errors ("cfg.json", "command line")."""

    where: str
    values: Any  # a mapping of Config fields; anything else is refused with `where` named


@frozen(kw_only=True)
class Layered:
    """The resulting config and, for every field, the layer that set it."""

    config: Config
    origins: Mapping[str, str] = field(repr=False)


def task_layer(info: TaskInfo, profile_name: str) -> Layer:
    """The task preset: the task's own Config defaults under `profile_name`
    (`TaskInfo.preset_for`), applied after the profile and before the user's file and flags."""
    return preset_layer(info.name, info.preset_for(profile_name))


def preset_layer(task_name: str, values: Mapping[str, Any]) -> Layer:
    return Layer(where=f"task {task_name} preset", values=dict(values))


def layer_config(profile_name: str, layers: Sequence[Layer]) -> Layered:
    """`profile_name`'s Config with `layers` applied in order (profile -> task preset -> user
    file -> flags)."""
    data = unstructure(profile(profile_name))
    origins = dict.fromkeys(data, f"profile {profile_name}")
    for layer in layers:
        if not isinstance(layer.values, Mapping):
            raise ConfigError(f"{layer.where}: expected a JSON object of Config fields")
        unknown = sorted(str(k) for k in layer.values if k not in data)
        if unknown:
            names = ", ".join(repr(k) for k in unknown)
            # worded as the converter words an unknown key of any record ("@ $": at the top)
            raise ConfigError(f"{layer.where}: unknown field(s) {names}: remove or fix them @ $")
        for key, value in layer.values.items():
            _check_value(key, value, layer.where)
        data.update(layer.values)
        origins.update(dict.fromkeys(layer.values, layer.where))
    try:
        config = structure(data, Config)
    except ConfigError as exc:
        raise _named(exc, exc.field, origins) from None
    except cattrs.ClassValidationError as exc:
        raise _first(exc, origins) from None
    return Layered(config=config, origins=origins)


@functools.cache
def _field_types() -> dict[str, Any]:
    return typing.get_type_hints(Config)


def _check_value(key: str, value: Any, where: str) -> None:
    """One field's value, checked as the constructor will check it (without the other fields)."""
    attribute = attrs.fields_dict(Config)[key]
    try:
        value = structure(value, _field_types()[key])
        if attribute.converter is not None:
            value = attribute.converter(value)  # type: ignore[operator]
        if attribute.validator is not None:
            attribute.validator(None, attribute, value)
    except ConfigError as exc:
        raise ConfigError(f"{where}: {exc}", field=key) from None
    except Exception as exc:  # the converter's type errors, in several classes
        raise ConfigError(f"{where}: {key}: {one_line(exc)}", field=key) from None


def _named(exc: BaseException, name: str | None, origins: Mapping[str, str]) -> ConfigError:
    where = origins.get(name or "", "config")
    message = str(exc) if isinstance(exc, ConfigError) else f"{name}: {exc}"
    return ConfigError(f"{where}: {message}", field=name)


def _first(exc: cattrs.ClassValidationError, origins: Mapping[str, str]) -> ConfigError:
    """The first failing field of a structuring error (a type error or a validator's)."""
    with_notes, without_notes = exc.group_exceptions()
    for inner, note in with_notes:
        return _named(inner, note.name, origins)
    for inner in without_notes:
        return _named(inner, getattr(inner, "field", None), origins)
    return ConfigError(f"config: {exc}")
