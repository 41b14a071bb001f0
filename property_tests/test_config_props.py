"""Config validation: every value outside a field's range is refused, at construction and
through a config layer (a file, the flags), with a one-line error naming the field.

`RANGES` is the specification, written here independently of `config.py` for the plain fields:
a new Config field must be added to it (the first test fails until it is). A released
mechanism's keys are read off its record (`config_mechanisms.py`): its validators' bounds.
"""

from __future__ import annotations

import math
from typing import Any

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from property_tests import strategies as S
from stratune_core.config.checks import Integer, Number
from stratune_core.config.flat import is_flat
from stratune_core.config.knobs import Config, released
from stratune_core.config.layers import Layer, config_keys, layer_config
from stratune_core.config.mechanisms import MECHANISMS, counted, flat_keys
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


UNIT = Num(0.0, 1.0)
RANGES: dict[str, Any] = {
    "seed": Int(0),
    "target_model": Text(),
    "optimizer_model": Text(),
    "budget": Int(1, optional=True),
    "budget_multiplier": Num(0.0, low_open=True),
    "n_batches": Int(1),
    "max_rounds": Int(1, optional=True),
    "max_unusable_rounds": Int(1, optional=True),
    "eps0": Num(0.0, 1.0, optional=True),
    "eps_v": UNIT,
    "delta": Num(0.0, 1.0, low_open=True),
    "z": Num(0.0, low_open=True),
    "lb_limit": UNIT,
    "screen_solved": Int(0),
    "screen_random": Int(0),
    "validation_frac": Num(0.0, 1.0, low_open=True),
    "validation_min": Int(0),
    "validation_max": Int(1, optional=True),
    "validation_lb_check": Flag(),
    "validation_floor": UNIT,
    "archive_cap": Int(1, optional=True),
    "final_seats": Int(1, optional=True),
    "final_select_frac": Num(0.0, 1.0, low_open=True, high_open=True),
    "final_gain_floor": UNIT,
    "reserve_rule": Spelled(("exact", "fixed")),
    "reserve": Int(0, optional=True),
    "success_threshold": Num(0.0, 1.0, optional=True),
    "n_candidates_i1": Int(1),
    "i3_k": Int(1),
    "i3_submit_max": Int(1, 2),
    "i3_runner_up_slack": UNIT,
    "ranking_size": Int(1, optional=True),
    "i2_advance_band": UNIT,
    "max_edits": Int(1),
    "rewrite_factor": Int(1),
    "rewrite_slack_chars": Int(0),
    "max_failures_shown": Int(1),
    "max_solved_offered": Int(0),
    "optimizer_max_tokens": Int(1),
    "prompt_tokens": Int(1000),
    "feedback_preparation": Flag(),
    "successes_prepared": Int(0),
    "max_epochs": Int(1, optional=True),
    "ready_changes": Int(1),
    "save_needs_wins": Flag(),
    "guard_severe_max": Int(0, optional=True),
    "aux_guardrail": Flag(),
    "screening_keeps_quota": Flag(),
    "screen_top_up": Flag(),
    "screen_solved_min": Int(0, optional=True),
    "max_solved_uses": Int(1, optional=True),
    "max_random_uses": Int(1, optional=True),
    "exclude_by_form": Flag(),
    "screen_ready_share": Num(0.0, 1.0, optional=True),
    "batch_order_seed": Int(0, optional=True),
    "validation_futility": Int(0),
    "initial_in_pool": Flag(),
    "final_floor_samples": Num(0.0),
    "final_min_common": Int(0),
    "feedback_contrast": Flag(),
    "feedback_longitudinal": Flag(),
    "feedback_trajectories": Flag(),
    "feedback_gold_pairs": Flag(),
    "feedback_global_stats": Flag(),
    "keep_refinement_on_accept": Flag(),
    "i2_without_failures": Flag(),
    "selector": Spelled(tuple(str(s) for cls in SELECTORS for s in cls.examples())),
    "forms": Spelled(("all", "F4")),
    "operator": Spelled(tuple(f"{s}{i}+F{f}" for s in "I" for i in (1, 2, 3) for f in (1, 2, 3, 4))),
    "history": Flag(),
    "validation": Flag(),
    "final_selection": Flag(),
    "bandit_epsilon": UNIT,
}



def _mechanism_range(key: str) -> Any:
    """A released mechanism's key, read off its record: the bounds its validator holds (a
    count that switches the mechanism also takes 0, off)."""
    if key in MECHANISMS and key not in flat_keys():
        return Switch(counted=counted(key))
    param = flat_keys()[key]
    check = attrs.fields_dict(MECHANISMS[param.mechanism])[param.name].validator
    if param.is_switch:
        return Int(0, optional=key in MECHANISMS)
    if isinstance(check, Integer):
        return Int(check.low if check.low is not None else -10**6, check.high, check.optional)
    if isinstance(check, Number):
        return Num(check.low if check.low is not None else -INF,
                   INF if check.high is None else check.high, check.low_open, check.high_open,
                   check.optional)
    return Flag()


RANGES.update({key: _mechanism_range(key) for key in (*MECHANISMS, *flat_keys())})

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
    """The Config fields and every mechanism's flat parameter keys (`config_keys`)."""
    assert set(RANGES) == set(config_keys())


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
