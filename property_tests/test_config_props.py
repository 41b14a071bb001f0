"""Config validation: every value outside a field's range is refused, at construction and
through a config layer (a file, the flags), with a one-line error naming the field.

`RANGES` is read off the validators of `Config`'s fields and of the released mechanisms'
records (`config/mechanisms.py`), so a new field or mechanism is covered without an edit here;
`PINNED` restates a few ranges independently, so a validator changed by mistake fails too.
"""

from __future__ import annotations

import math
from typing import Any

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from property_tests import strategies as S
from stratune_core.config.checks import Integer, Number, flag, non_empty_text
from stratune_core.config.flat import is_flat
from stratune_core.config.knobs import Config
from stratune_core.config.layers import Layer, config_keys, layer_config
from stratune_core.config.mechanisms import MECHANISMS, counted, flat_keys
from stratune_core.config.profiles import released
from stratune_core.records.errors import ConfigError
from stratune_core.selection.selectors.registry import SELECTORS

INF = math.inf


@attrs.frozen
class Int:
    low: int
    high: int | None = None
    optional: bool = False


@attrs.frozen
class Num:
    low: float
    high: float = INF
    low_open: bool = False
    high_open: bool = False
    optional: bool = False


@attrs.frozen
class Flag:
    pass


@attrs.frozen
class Text:
    pass


@attrs.frozen
class Switch:
    """A released mechanism given whole: true (its defaults), false or null (off), a table;
    `counted`: switched by a count instead (0 off)."""

    counted: bool = False


@attrs.frozen
class Spelled:
    valid: tuple[str, ...]


# Fields read through a converter from their spellings rather than checked against a range.
SPELLED: dict[str, Spelled] = {
    "reserve_rule": Spelled(("exact", "fixed")),
    "selector": Spelled(tuple(str(s) for cls in SELECTORS for s in cls.examples())),
    "forms": Spelled(("all", "F4")),
    "operator": Spelled(tuple(f"{s}{i}+F{f}" for s in "I" for i in (1, 2, 3) for f in (1, 2, 3, 4))),
}


def _bounds(check: Any) -> Any:
    """The range a validator holds, or None for one this file cannot read."""
    if isinstance(check, Integer):
        return Int(check.low if check.low is not None else -10**6, check.high, check.optional)
    if isinstance(check, Number):
        return Num(check.low if check.low is not None else -INF,
                   INF if check.high is None else check.high, check.low_open, check.high_open,
                   check.optional)
    if check is flag:
        return Flag()
    if check is non_empty_text:
        return Text()
    return None


def _mechanism_range(key: str) -> Any:
    """A released mechanism's key, read off its record: the bounds its validator holds (a
    count that switches the mechanism also takes 0, off)."""
    if key in MECHANISMS and key not in flat_keys():
        return Switch(counted=counted(key))
    param = flat_keys()[key]
    if param.is_switch:
        return Int(0, optional=key in MECHANISMS)
    return _bounds(attrs.fields_dict(MECHANISMS[param.mechanism])[param.name].validator)


def _ranges() -> dict[str, Any]:
    """Every key's range, read off the validators of Config and of the mechanisms' records, so
    a new field or mechanism is tested without an edit here (a validator this file cannot read
    leaves its key out, which the first test reports)."""
    found = {a.name: _bounds(a.validator) for a in attrs.fields(Config)
             if a.name not in MECHANISMS and a.name not in SPELLED}
    found |= SPELLED
    found |= {key: _mechanism_range(key) for key in (*MECHANISMS, *flat_keys())}
    return {key: spec for key, spec in found.items() if spec is not None}


RANGES = _ranges()
UNIT = Num(0.0, 1.0)
# A few ranges restated from the paper and the docs, independently of the validators, so a
# validator loosened or tightened by mistake fails here too.
PINNED: dict[str, Any] = {
    "seed": Int(0),
    "budget": Int(1, optional=True),
    "delta": Num(0.0, 1.0, low_open=True),
    "validation_frac": Num(0.0, 1.0, low_open=True),
    "final_select_frac": Num(0.0, 1.0, low_open=True, high_open=True),
    "i3_submit_max": Int(1, 2),
    "prompt_tokens": Int(1000, 10**8),  # bounded above too: a larger prompt is a typo (issue 38)
    "eps_v": UNIT,
    "bandit_epsilon": UNIT,
    "screen_ready_share": Num(0.0, 1.0, optional=True),
    "i2_window_slack": UNIT,
    "warmup_solved": Int(0),
    "screen_smoke_broken": Int(1),
    "feedback_contrast": Flag(),
    "target_model": Text(),
}

NOT_FINITE = st.sampled_from([math.nan, INF, -INF])
NOT_A_NUMBER = st.one_of(st.text(max_size=5), st.booleans(), st.lists(st.integers(), max_size=2))


def invalid(spec: Any) -> st.SearchStrategy[Any]:
    """Values outside `spec`'s range or of the wrong type."""
    none = st.nothing() if getattr(spec, "optional", True) else st.none()
    if isinstance(spec, Int):
        edges = [spec.low - 1] + ([spec.high + 1] if spec.high is not None else [])
        above = st.integers(min_value=spec.high + 1) if spec.high is not None else st.nothing()
        return st.one_of(st.sampled_from(edges), st.integers(max_value=spec.low - 1), above,
                         NOT_A_NUMBER, none, st.floats(allow_nan=True), NOT_FINITE)
    if isinstance(spec, Num):
        below = st.floats(max_value=spec.low, exclude_max=not spec.low_open, allow_nan=False,
                          allow_infinity=False)
        edges = [spec.low if spec.low_open else math.nextafter(spec.low, -INF), spec.low - 0.5]
        above = st.nothing()
        if spec.high != INF:
            above = st.floats(min_value=spec.high, exclude_min=not spec.high_open,
                              allow_nan=False, allow_infinity=False)
            edges += [spec.high if spec.high_open else math.nextafter(spec.high, INF),
                      spec.high + 0.5]
        return st.one_of(st.sampled_from(edges), below, above, NOT_FINITE, NOT_A_NUMBER, none)
    if isinstance(spec, Flag):
        return st.one_of(st.integers(0, 1), st.text(max_size=5), st.none())
    if isinstance(spec, Text):
        return st.one_of(st.sampled_from(["", "  ", "\n"]), st.integers(), st.none())
    if isinstance(spec, Switch) and spec.counted:
        return st.one_of(st.integers(max_value=-1), st.booleans(), st.text(max_size=5))
    if isinstance(spec, Switch):
        return st.one_of(st.integers(), st.text(max_size=5), st.lists(st.integers(), max_size=2))
    words = st.text(max_size=12).filter(lambda s: s not in spec.valid and not s.startswith(
        "replay:") or s == "replay:")
    return st.one_of(words, st.integers(), st.booleans())


def valid(spec: Any) -> st.SearchStrategy[Any]:
    none = st.none() if getattr(spec, "optional", False) else st.nothing()
    if isinstance(spec, Int):
        return st.one_of(st.integers(spec.low, spec.high if spec.high is not None else 10**6), none)
    if isinstance(spec, Num):
        return st.one_of(st.floats(spec.low, min(spec.high, 1e6), exclude_min=spec.low_open,
                                   exclude_max=spec.high_open), none)
    if isinstance(spec, Flag):
        return st.booleans()
    if isinstance(spec, Text):
        return st.text(min_size=1, max_size=8).filter(str.strip)
    if isinstance(spec, Switch):
        return st.one_of(st.integers(0, 10**6) if spec.counted else st.booleans(), st.none())
    return st.sampled_from(spec.valid)


def test_every_config_field_has_a_range() -> None:
    """The Config fields and every mechanism's flat parameter keys (`config_keys`): each has a
    validator whose range this file reads, or a spelling."""
    assert set(RANGES) == set(config_keys()), sorted(set(config_keys()) - set(RANGES))


@pytest.mark.parametrize("name", sorted(PINNED))
def test_the_validators_hold_the_documented_ranges(name: str) -> None:
    assert RANGES[name] == PINNED[name]


def _on(name: str) -> dict[str, Any]:
    """What a layer must also set for `name` to be settable: its mechanism, switched on."""
    if name in flat_keys() and not flat_keys()[name].is_switch:
        return {flat_keys()[name].mechanism: {}}  # on, at its defaults
    return {}


def _make(name: str, value: Any) -> Config:
    """A Config with `name` (a field or a flat parameter key) set to `value`."""
    if name in flat_keys() and is_flat(name, value):
        return Config(**{m: MECHANISMS[m]() for m in _on(name)}).replace(**{name: value})
    return Config(**{name: value})


def _read(config: Config, name: str) -> Any:
    if name in flat_keys() and name not in attrs.fields_dict(Config):
        record = getattr(config, flat_keys()[name].mechanism)
        return 0 if record is None else getattr(record, flat_keys()[name].name)
    value = getattr(config, name)
    if isinstance(RANGES[name], Switch):
        return value is not None if isinstance(value, bool) or value is None else value
    if name in flat_keys():  # a count that switches its mechanism
        return 0 if value is None else getattr(value, flat_keys()[name].name)
    return value


def _one_line(exc: BaseException, *names: str) -> None:
    message = str(exc)
    assert message and "\n" not in message, message
    for name in names:
        assert name in message, f"{name!r} not in {message!r}"


@pytest.mark.parametrize("name", sorted(RANGES))
@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_every_out_of_range_value_is_refused(name: str, data: st.DataObject) -> None:
    value = data.draw(invalid(RANGES[name]), label=name)
    with pytest.raises(ConfigError) as caught:
        _make(name, value)
    _one_line(caught.value, name)
    assert str(caught.value).startswith(name)
    for where in ("cfg.json", "command line"):  # a file and the flags: the same checks
        with pytest.raises(ConfigError) as caught:
            layer_config("paper", [Layer(where=where, values={**_on(name), name: value})])
        _one_line(caught.value, where, name)


@pytest.mark.parametrize("name", sorted(RANGES))
@settings(max_examples=15, deadline=None)
@given(data=st.data())
def test_values_in_range_are_accepted(name: str, data: st.DataObject) -> None:
    value = data.draw(valid(RANGES[name]), label=name)
    config = _make(name, value)
    if isinstance(RANGES[name], Switch):
        assert (getattr(config, name) is not None) == bool(value)
    elif not isinstance(RANGES[name], Spelled):
        off = 0 if name in flat_keys() else None  # a switching count's null is off, as 0
        assert _read(config, name) == (off if value is None else value)
    layer = Layer(where="cfg.json", values={**_on(name), name: value})
    assert layer_config("paper", [layer]).config == config


@pytest.mark.parametrize("name", sorted(k for k in flat_keys() if not flat_keys()[k].is_switch))
def test_a_parameter_of_a_mechanism_that_is_off_is_refused(name: str) -> None:
    """Under the paper profile, and under the released one with the mechanism switched off
    in the same file: one line naming the file and the key, before anything runs."""
    value = getattr(getattr(released(), flat_keys()[name].mechanism), flat_keys()[name].name)
    off = flat_keys()[name].mechanism
    for profile_name, values in (("paper", {name: value}),
                                 ("released", {name: value, off: None})):
        with pytest.raises(ConfigError) as caught:
            layer_config(profile_name, [Layer(where="cfg.json", values=values)])
        _one_line(caught.value, "cfg.json", name, off)
        assert caught.value.field == name
    with pytest.raises(ConfigError) as caught:
        Config().replace(**{name: value})
    _one_line(caught.value, name, off)


@settings(max_examples=50, deadline=None)
@given(config=S.configs(), data=st.data())
def test_a_bad_file_value_is_reported_even_when_a_flag_replaces_it(config, data) -> None:
    name = data.draw(st.sampled_from(["seed", "budget", "selector"]))
    good = getattr(Config(), name)
    bad = data.draw(invalid(RANGES[name]))
    with pytest.raises(ConfigError) as caught:
        layer_config("paper", [Layer(where="cfg.json", values={name: bad}),
                               Layer(where="command line", values={name: str(good)
                                                                   if name == "selector"
                                                                   else good})])
    _one_line(caught.value, "cfg.json", name)


CROSS = [
    ({"validation_min": 40, "validation_max": 30}, "validation_min"),
    ({"budget": 100, "reserve": 100}, "reserve"),
    ({"screen_solved": 0, "screen_random": 0}, "screen_random"),
    ({"operator": "I3+F1", "selector": "rotation"}, "operator"),
    ({"operator": "I2+F1", "forms": "F4"}, "operator"),
]


@pytest.mark.parametrize(("values", "field"), CROSS)
def test_cross_field_rules(values: dict[str, Any], field: str) -> None:
    with pytest.raises(ConfigError) as caught:
        Config(**values)
    _one_line(caught.value, field)
    assert caught.value.field == field
    with pytest.raises(ConfigError) as caught:  # named by the layer that set the field
        layer_config("paper", [Layer(where="base.json", values=values),
                               Layer(where="command line", values={"seed": 3})])
    _one_line(caught.value, "base.json", field)


@pytest.mark.parametrize("values", [
    {"validation_min": 30, "validation_max": 30}, {"budget": 100, "reserve": 99},
    {"screen_solved": 0, "screen_random": 1}, {"operator": "I3+F4", "forms": "F4"},
])
def test_cross_field_rules_allow_the_edge(values: dict[str, Any]) -> None:
    Config(**values)


def test_profile_then_file_then_flags() -> None:
    layered = layer_config("released", [
        Layer(where="cfg.json", values={"budget": 500, "seed": 1, "selector": "rotation"}),
        Layer(where="command line", values={"seed": 2}),
    ])
    config = layered.config
    assert (config.budget, config.seed, str(config.selector)) == (500, 2, "rotation")
    assert config.validation_min == 100  # from the profile
    assert layered.origins["seed"] == "command line" and layered.origins["budget"] == "cfg.json"
    assert layered.origins["validation_min"] == "profile released"


def test_an_unknown_key_in_a_mechanisms_table_is_named() -> None:
    with pytest.raises(ConfigError) as caught:
        layer_config("paper", [Layer(where="cfg.json", values={"i2_window": {"draft": 3}})])
    _one_line(caught.value, "cfg.json", "i2_window", "'draft'")
    config = layer_config("paper", [Layer(where="cfg.json", values={"i2_window": {"drafts": 3}})])
    assert config.config.i2_window is not None and config.config.i2_window.drafts == 3
    assert config.origins["i2_window_drafts"] == "cfg.json"
