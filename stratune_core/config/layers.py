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

from stratune_core.config.flat import Edit, Sets, apply, is_off_count, read
from stratune_core.config.knobs import Config
from stratune_core.config.mechanisms import MECHANISMS, counted, flat_keys
from stratune_core.config.profiles import profile
from stratune_core.config.serde import one_line, structure, unstructure
from stratune_core.records.base import TaskInfo
from stratune_core.records.errors import ConfigError


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
    origins = dict.fromkeys(config_keys(), f"profile {profile_name}")
    for layer in layers:
        if not isinstance(layer.values, Mapping):
            raise ConfigError(f"{layer.where}: expected a JSON object of Config fields")
        unknown = sorted(str(k) for k in layer.values if k not in origins)
        if unknown:
            names = ", ".join(repr(k) for k in unknown)
            # worded as the converter words an unknown key of any record ("@ $": at the top)
            raise ConfigError(f"{layer.where}: unknown field(s) {names}: remove or fix them @ $")
        for edit in read(layer.values):  # the flat keys translated once, here
            _check_value(edit, layer.where)
            try:
                apply(data, edit)
            except ConfigError as exc:
                raise ConfigError(f"{layer.where}: {exc}", field=edit.written) from None
            origins.update(dict.fromkeys(edit.keys_set, layer.where))
    try:
        config = structure(data, Config)
    except ConfigError as exc:
        raise _named(exc, exc.field, origins) from None
    except cattrs.ClassValidationError as exc:
        raise _first(exc, origins) from None
    return Layered(config=config, origins=origins)


@functools.cache
def config_keys() -> tuple[str, ...]:
    """Every key a layer may set: the Config fields and the mechanisms' flat parameter keys."""
    return (*attrs.fields_dict(Config), *flat_keys())


def _attribute(edit: Edit) -> tuple[attrs.Attribute, Any]:
    """The field an edit checks against, and its type: a flat key's is its mechanism's field
    (also for a counted mechanism given whole, whose key is its count's)."""
    if edit.key in flat_keys():
        param = flat_keys()[edit.key]
        record = MECHANISMS[param.mechanism]
        return attrs.fields_dict(record)[param.name], typing.get_type_hints(record)[param.name]
    return attrs.fields_dict(Config)[edit.key], typing.get_type_hints(Config)[edit.key]


def _check_value(edit: Edit, where: str) -> None:
    """One field's value, checked as the constructor will check it (without the other fields).
    A mechanism given whole (`true`, `null`, a table) is checked when the config is built; a
    count that switches one is checked unless it is 0 (off)."""
    key, value = edit.key, edit.value
    if edit.sets is Sets.WHOLE and (value is None or isinstance(value, Mapping)
                                    or isinstance(value, bool) and not counted(key)):
        return
    if edit.sets is Sets.SWITCH and is_off_count(value):
        return
    if edit.sets is Sets.WHOLE and not counted(key):
        raise ConfigError(f"{where}: {key}: must be true, false, null or a table of "
                          f"{MECHANISMS[key].__name__}'s fields, got {value!r:.40}", field=key)
    attribute, kind = _attribute(edit)
    try:
        value = structure(value, kind)
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


def _first(exc: cattrs.ClassValidationError, origins: Mapping[str, str],
           within: str | None = None) -> ConfigError:
    """The first failing field of a structuring error (a type error or a validator's);
    `within`: the mechanism whose record is being read."""
    with_notes, without_notes = exc.group_exceptions()
    for inner, note in with_notes:
        if isinstance(inner, cattrs.ClassValidationError):  # a mechanism's record
            return _first(inner, origins, str(note.name))
        return _named(inner, note.name, origins)
    for inner in without_notes:
        if isinstance(inner, cattrs.ForbiddenExtraKeysError):
            names = ", ".join(repr(k) for k in sorted(inner.extra_fields))
            inner = ConfigError(f"{within}: unknown field(s) {names}: remove or fix them")
        return _named(inner, getattr(inner, "field", None) or within, origins)
    return ConfigError(f"config: {exc}")
