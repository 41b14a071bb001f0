"""Config: paper defaults, the released profile, derived sizes and validators."""

from __future__ import annotations

import pytest

from stratune_core.config.knobs import Config
from stratune_core.config.mechanisms import EarlyStopping
from stratune_core.config.profiles import paper, profile, released
from stratune_core.records.enums import Form, Strategy
from stratune_core.records.errors import ConfigError, StraTuneError


def test_paper_defaults() -> None:
    """Defaults are the paper's values (App. B, §4.1)."""
    c = paper()
    assert c == Config()
    assert (c.eps_v, c.delta, c.z, c.lb_limit) == (0.01, 0.10, 1.2816, 0.5)
    assert (c.screen_solved, c.screen_random) == (18, 18)
    assert (c.validation_frac, c.n_batches, c.budget_multiplier) == (0.3, 16, 6.0)
    assert (c.i3_k, c.i3_runner_up_slack, c.i3_submit_max) == (3, 0.02, 2)
    assert (c.final_select_frac, c.final_gain_floor) == (0.6, 0.01)
    assert c.validation_lb_check and c.validation_floor == 0.0
    assert c.archive_cap == 4 and c.final_seats is None  # App. B: the pool as released
    assert c.early_stopping is None and c.n_candidates_i1 == 1 and c.success_threshold is None


def test_released_profile_values() -> None:
    """The released profile changes exactly the documented fields."""
    r = released()
    assert (r.validation_min, r.validation_max) == (100, 300)
    assert r.validation_lb_check and r.validation_floor == 0.010  # LB(D, D+U) in both
    assert (r.archive_cap, r.final_seats, r.n_candidates_i1) == (4, 2, 2)
    assert r.reserve_rule == "fixed"
    assert r.early_stopping == EarlyStopping(unless_i2=True) and r.max_epochs == 4
    same = {"eps_v", "delta", "z", "screen_solved", "screen_random", "n_batches", "i3_k"}
    assert all(getattr(r, f) == getattr(paper(), f) for f in same)


def test_profile_lookup() -> None:
    """Profiles are looked up by name; an unknown name is a ConfigError naming the choices."""
    assert profile("released") == released()
    with pytest.raises(ConfigError, match="paper, released"):
        profile("nope")


@pytest.mark.parametrize(
    ("n", "budget", "val_paper", "val_released", "reserve", "ranking"),
    [
        (500, 3000, 150, 150, 750, 41),
        (100, 600, 30, 100, 150, 32),
        (2000, 12000, 600, 300, 1200, 64),
    ],
)
def test_derived_sizes(
    n: int, budget: int, val_paper: int, val_released: int, reserve: int, ranking: int
) -> None:
    """B = 6n, |Q_v| = round(0.3 n) (released clamps to [100, 300]), the released profile's
    fixed reserve, ranking size."""
    assert paper().budget_for(n) == budget
    assert paper().validation_size(n) == val_paper
    assert released().validation_size(n) == val_released
    assert released().reserve_for(n) == reserve
    assert paper().ranking_size_for(n) == ranking


def test_explicit_overrides_win() -> None:
    """An explicit budget, reserve or ranking size replaces the derived one."""
    c = Config(budget=77, reserve=5, ranking_size=9)
    assert (c.budget_for(1000), c.reserve_for(1000), c.ranking_size_for(1000)) == (77, 5, 9)


@pytest.mark.parametrize(
    "changes",
    [
        {"budget": 0},
        {"delta": 0.0},
        {"eps_v": -0.1},
        {"n_batches": 0},
        {"screen_solved": -1},
        {"selector": "no_such_selector"},
        {"forms": "F2"},
        {"operator": "I4+F1"},
        {"operator": "I1"},
    ],
)
def test_validators_raise_config_error(changes: dict) -> None:
    """Out-of-range or unknown values raise a one-line ConfigError naming the field."""
    with pytest.raises(ConfigError) as info:
        Config(**changes)
    field = next(iter(changes))
    assert str(info.value).startswith(field)
    assert "\n" not in str(info.value)


def test_replace_and_operator() -> None:
    """replace checks values and names; a fixed operator parses into enums."""
    c = paper().replace(operator="I3+F2")
    assert (c.operator.strategy, c.operator.form) == (Strategy.I3, Form.F2)
    assert paper().operator is None
    assert str(paper().replace(selector="replay:runs/a").selector) == "replay:runs/a"
    with pytest.raises(ConfigError):
        paper().replace(no_such_field=1)
    assert issubclass(ConfigError, StraTuneError)


@pytest.mark.parametrize(("n", "size"), [(15, 5), (45, 14), (397, 119), (629, 189), (5, 2)])
def test_paper_rounding_takes_halves_up(n: int, size: int) -> None:
    """The paper's round(0.3 n) rounds a half up (Python's round gives 4 for n = 15)."""
    assert paper().validation_size(n) == size
    assert paper().replace(budget_multiplier=1.5).budget_for(5) == 8  # 7.5


def test_reserve_rules() -> None:
    """Paper: an exact reserve (None: computed as the run goes); released: the fixed
    min(1200, ceil(1.5 n)); an explicit `reserve` is a fixed reserve under either rule."""
    assert paper().reserve_rule == "exact" and paper().reserve_for(500) is None
    assert released().reserve_rule == "fixed" and released().reserve_for(500) == 750
    assert released().reserve_for(2000) == 1200 and paper().replace(reserve=30).reserve_for(9) == 30
    with pytest.raises(ConfigError, match="reserve_rule: unknown value 'some'"):
        Config(reserve_rule="some")


def test_task_preset_sits_between_profile_and_user_layers() -> None:
    """LiveMath's preset (24 + 24 screening samples, paper Table 5) beats the profile and loses
    to the user's file and flags; `origins` names the layer of each field."""
    from stratune_core.config.layers import Layer, layer_config, task_layer
    from stratune_core.records.base import TaskInfo
    from stratune_core.tasks.livemath import LiveMathTask

    info = LiveMathTask.PRESET
    assert dict(info) == {"screen_solved": 24, "screen_random": 24}
    task = TaskInfo(name="livemath", initial_skill="s", preset=info,
                    profile_presets=LiveMathTask.PROFILE_PRESETS)
    for profile_name in ("paper", "released"):
        layered = layer_config(profile_name, [task_layer(task, profile_name)])
        assert (layered.config.screen_solved, layered.config.screen_random) == (24, 24)
        assert layered.origins["screen_solved"] == "task livemath preset"
    user = layer_config("paper", [task_layer(task, "paper"),
                                  Layer(where="cfg.json", values={"screen_random": 12})])
    assert (user.config.screen_solved, user.config.screen_random) == (24, 12)
    assert user.origins["screen_random"] == "cfg.json"
    bad = task_layer(TaskInfo(name="odd", initial_skill="s", preset={"screen_solvd": 1}), "paper")
    with pytest.raises(ConfigError, match="task odd preset: unknown field"):
        layer_config("paper", [bad])
