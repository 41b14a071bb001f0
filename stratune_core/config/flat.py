"""Released mechanisms spelt flat. A config file, a task preset and a manifest written before
the mechanisms were records (`config/mechanisms.py`) may give a mechanism as a switch
(`"i2_window": true`, or a count that is 0 when off, as `"warmup_solved": 18`) beside its
parameters under their own keys (`"i2_window_drafts": 4`). `set_key` reads one such key into
nested Config data, `nest` a whole manifest's config.
"""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping
from typing import Any

from stratune_core.config.mechanisms import MECHANISMS, counted, defaults, flat_keys
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


def set_key(data: MutableMapping[str, Any], key: str, value: Any) -> None:
    """Apply one key of a config file or manifest, flat or nested, to nested Config data whose
    mechanisms are None or dicts of their fields. Switches must be applied before parameters
    (`ordered`); a parameter of a mechanism that is off raises `MechanismOff`."""
    key = spelt_flat(key, value)
    if key in MECHANISMS and not is_flat(key, value):
        if value is None or value is False:
            data[key] = None
        elif value is True:
            data[key] = data.get(key) or defaults(key)
        else:
            data[key] = {**(data.get(key) or defaults(key)), **value}
        return
    if key in flat_keys():
        param = flat_keys()[key]
        mechanism = param.mechanism
        if param.is_switch and is_off_count(value):
            data[mechanism] = None
        elif param.is_switch:
            data[mechanism] = {**(data.get(mechanism) or defaults(mechanism)), param.name: value}
        elif data.get(mechanism) is None:
            raise MechanismOff.of(key)
        else:
            data[mechanism] = {**data[mechanism], param.name: value}
        return
    data[key] = value


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
    for key in ordered(data):
        try:
            set_key(out, key, data[key])
        except MechanismOff:
            continue
    return out
