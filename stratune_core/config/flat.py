"""Released mechanisms spelt flat. A config file, a task preset and a manifest written before
the mechanisms were records (`config/mechanisms.py`) may give a mechanism as a switch
(`"i2_window": true`, or a count that is 0 when off, as `"warmup_solved": 18`) beside its
parameters under their own keys (`"i2_window_drafts": 4`). `read` translates a layer's keys
once, where they enter (spelling, what each sets, the order to apply them in); `apply` sets one
on nested Config data; `nest` does both for a whole manifest's config.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, MutableMapping
from typing import Any

import attrs
from attrs import frozen

from stratune_core.config.mechanisms import MECHANISMS, counted, defaults, flat_keys, to_record
from stratune_core.records.errors import ConfigError


def is_off_count(value: Any) -> bool:
    """A switching count's 0 (False is not a count)."""
    return type(value) is int and value == 0


def spelt_flat(key: str, value: Any) -> str:
    """A counted mechanism given a count under its field's name (`"warmup": 18`) is its
    count's key (`warmup_solved`)."""
    if key in MECHANISMS and counted(key) and type(value) is int:
        return MECHANISMS[key].SWITCH
    return key


def is_flat(key: str, value: Any) -> bool:
    """Whether `key` sets a parameter (`screen_smoke: 8`) rather than a whole mechanism
    (`screen_smoke: null`, a table, a record, or true/false for a switch)."""
    if key not in flat_keys():
        return False
    return key not in MECHANISMS or not (
        value is None or isinstance(value, Mapping | MECHANISMS[key])
        or isinstance(value, bool) and not counted(key))


class MechanismOff(ConfigError):
    """A flat parameter key whose mechanism is off."""

    @classmethod
    def of(cls, key: str) -> MechanismOff:
        mechanism = flat_keys()[key].mechanism
        return cls(f"{key}: a parameter of {mechanism}, which is off; turn {mechanism} on "
                   f"(\"{MECHANISMS[mechanism].SWITCH}\") or remove {key}", field=key)


class Sets(enum.Enum):
    """What one key of a layer sets."""

    FIELD = "field"  # a plain Config field
    WHOLE = "whole"  # a mechanism whole: null, true/false, a table of its fields
    SWITCH = "switch"  # a count that also switches its mechanism (0: off)
    PARAM = "param"  # one parameter of a mechanism, which must be on


@frozen(kw_only=True)
class Edit:
    """One key of a layer, read once: `key` as spelt for checks and messages (a counted
    mechanism's count under its switch's key), `written` as the layer wrote it."""

    written: str
    key: str
    value: Any
    sets: Sets
    mechanism: str = ""  # the mechanism's Config field (all but FIELD)
    name: str = ""  # the mechanism record's field (SWITCH, PARAM)

    @property
    def keys_set(self) -> tuple[str, ...]:
        """The keys whose origin becomes this layer's: a mechanism's with all its parameters."""
        if self.sets in (Sets.WHOLE, Sets.SWITCH):
            params = (k for k, p in flat_keys().items() if p.mechanism == self.mechanism)
            return (self.mechanism, *params)
        return (self.key,)


def read(values: Mapping[str, Any]) -> tuple[Edit, ...]:
    """A layer's keys as edits, in the order they apply: switches first, so a file may name a
    parameter before its switch."""
    return tuple(_edit(key, values[key]) for key in ordered(values))


def _edit(written: str, value: Any) -> Edit:
    key = spelt_flat(written, value)
    if key in MECHANISMS and not is_flat(key, value):
        return Edit(written=written, key=key, value=value, sets=Sets.WHOLE, mechanism=key)
    if key in flat_keys():
        param = flat_keys()[key]
        return Edit(written=written, key=key, value=value, mechanism=param.mechanism,
                    name=param.name, sets=Sets.SWITCH if param.is_switch else Sets.PARAM)
    return Edit(written=written, key=key, value=value, sets=Sets.FIELD)


def apply(data: MutableMapping[str, Any], edit: Edit) -> None:
    """Apply one edit to nested Config data whose mechanisms are None or dicts of their fields;
    a parameter of a mechanism that is off raises `MechanismOff`."""
    value, mechanism = edit.value, edit.mechanism
    if edit.sets is Sets.WHOLE:
        if value is None or value is False:
            data[mechanism] = None
        elif value is True:
            data[mechanism] = data.get(mechanism) or defaults(mechanism)
        else:
            data[mechanism] = {**(data.get(mechanism) or defaults(mechanism)), **value}
    elif edit.sets is Sets.SWITCH and is_off_count(value):
        data[mechanism] = None
    elif edit.sets is Sets.SWITCH:
        data[mechanism] = {**(data.get(mechanism) or defaults(mechanism)), edit.name: value}
    elif edit.sets is Sets.PARAM and data.get(mechanism) is None:
        raise MechanismOff.of(edit.key)
    elif edit.sets is Sets.PARAM:
        data[mechanism] = {**data[mechanism], edit.name: value}
    else:
        data[edit.key] = value


def ordered(keys: Mapping[str, Any]) -> list[str]:
    """`keys` with the switches first, so a file may name a parameter before its switch."""
    def is_switch(key: str) -> bool:
        return key in MECHANISMS or key in flat_keys() and flat_keys()[key].is_switch

    return sorted(keys, key=lambda k: not is_switch(k))


def nest(data: Mapping[str, Any]) -> dict[str, Any]:
    """A manifest's config, flat (written before the records existed) or nested, as nested
    data. A flat manifest recorded every parameter, also those of mechanisms that were off,
    which had no effect and are dropped."""
    out: dict[str, Any] = {}
    for edit in read(data):
        try:
            apply(out, edit)
        except MechanismOff:
            continue
    return out


def flat_changes(config: Any, changes: Mapping[str, Any]) -> dict[str, Any]:
    """`Config.replace`'s changes with every flat key folded into its mechanism's record: a
    parameter needs its mechanism on (on `config`, or turned on by `changes`)."""
    direct = {k: v for k, v in changes.items() if not is_flat(k, v)}
    for key in ordered(changes):
        if not is_flat(key, changes[key]):
            continue
        param, value = flat_keys()[key], changes[key]
        record = to_record(param.mechanism)(direct.get(param.mechanism,
                                                       getattr(config, param.mechanism)))
        if param.is_switch and is_off_count(value):
            direct[param.mechanism] = None
        elif record is None and not param.is_switch:
            raise MechanismOff.of(key)
        else:
            record = MECHANISMS[param.mechanism]() if record is None else record
            direct[param.mechanism] = attrs.evolve(record, **{param.name: value})
    return direct
