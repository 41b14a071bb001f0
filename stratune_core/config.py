"""One frozen `Config` with every knob. Defaults are the paper's values (profile `paper`);
the released code's variants form the named profile `released` (SPEC §4.5-4.7,
notes/official_stratune.md §4, §9). No module reads a global: the config is passed down.
"""

from __future__ import annotations

import math

import attrs
from attrs import field, frozen

from stratune_core.enums import Form, Strategy
from stratune_core.errors import ConfigError

SELECTORS = (
    "llm",
    "fixed:I1",
    "fixed:I2",
    "fixed:I3",
    "random",
    "rotation",
    "once",
    "bandit:epsilon_greedy",
    "bandit:ucb1",
    "bandit:thompson",
)


def _check_selector(_inst: object, _attr: attrs.Attribute, value: str) -> None:
    if value in SELECTORS or value.startswith("replay:"):
        return
    raise ConfigError(
        f"selector: unknown value {value!r}; use one of {', '.join(SELECTORS)} or replay:<trace>"
    )


def _check_forms(_inst: object, _attr: attrs.Attribute, value: str) -> None:
    if value in ("all", "F4"):
        return
    raise ConfigError(f"forms: unknown value {value!r}; use 'all' or 'F4'")


def _check_operator(_inst: object, _attr: attrs.Attribute, value: str | None) -> None:
    if value is None:
        return
    parts = value.split("+")
    if (
        len(parts) == 2
        and parts[0] in Strategy.__members__
        and parts[1] in Form.__members__
    ):
        return
    raise ConfigError(f"operator: {value!r} is not STRATEGY+FORM such as 'I3+F3'")


def _positive(_inst: object, attr: attrs.Attribute, value: float) -> None:
    if value is not None and value <= 0:
        raise ConfigError(f"{attr.name}: must be > 0, got {value!r}")


def _non_negative(_inst: object, attr: attrs.Attribute, value: float) -> None:
    if value is not None and value < 0:
        raise ConfigError(f"{attr.name}: must be >= 0, got {value!r}")


@frozen(kw_only=True)
class Config:
    # --- run ------------------------------------------------------------------------------
    seed: int = field(default=0, validator=_non_negative)  # numpy SeedSequence needs >= 0
    target_model: str = "target"
    optimizer_model: str = "optimizer"
    budget: int | None = field(default=None, validator=_positive)  # None: multiplier * |train|
    budget_multiplier: float = field(default=6.0, validator=_positive)
    n_batches: int = field(default=16, validator=_positive)  # N_Q
    max_rounds: int | None = field(default=None, validator=_positive)

    # --- candidate evaluation (App. B) ------------------------------------------------------
    eps0: float | None = field(default=None, validator=_non_negative)  # None: the task's floor
    eps_v: float = field(default=0.01, validator=_non_negative)
    delta: float = field(default=0.10, validator=_positive)
    z: float = field(default=1.2816, validator=_positive)
    lb_limit: float = 0.5
    screen_solved: int = field(default=18, validator=_non_negative)
    screen_random: int = field(default=18, validator=_non_negative)
    validation_frac: float = field(default=0.3, validator=_positive)
    validation_min: int = field(default=0, validator=_non_negative)  # released: 100
    validation_max: int | None = None  # released: 300
    validation_lb_check: bool = True  # released: no LB(D, D+U) check in validation
    validation_floor: float = 0.0  # released: eps_v is max(eps0, 0.010)

    # --- saved candidates and final selection ------------------------------------------------
    archive_cap: int | None = None  # released: 4
    final_seats: int | None = None  # released: 2 contenders
    final_select_frac: float = 0.6
    final_gain_floor: float = 0.01
    reserve: int | None = field(default=None, validator=_non_negative)  # None: min(1200, ceil(1.5 n))

    # --- strategies and forms ----------------------------------------------------------------
    n_candidates_i1: int = field(default=1, validator=_positive)  # released: 2
    i3_k: int = field(default=3, validator=_positive)
    i3_submit_max: int = field(default=2, validator=_positive)
    i3_runner_up_slack: float = 0.02
    ranking_size: int | None = field(default=None, validator=_positive)  # None: min(64, max(32, n//12))
    i2_advance_band: float = 0.010  # a draft becomes s~ if its screening gain >= -max(band, 1.5 eps)
    max_edits: int = field(default=6, validator=_positive)
    rewrite_factor: int = 4
    rewrite_slack_chars: int = 10_000
    max_failures_shown: int = 12
    max_solved_offered: int = 10
    optimizer_max_tokens: int = field(default=16384, validator=_positive)

    # --- released-code mechanisms ------------------------------------------------------------
    strategy_floors: bool = False  # force an untried I2 at 35% of the budget, I3 at 50%
    floor_i2_frac: float = field(default=0.35, validator=_non_negative)
    floor_i3_frac: float = field(default=0.50, validator=_non_negative)
    early_stopping: bool = False  # stop at epoch e >= 2 when epoch e-1 accepted nothing
    max_epochs: int | None = None  # released: 4

    # --- ablations (SPEC §7) -------------------------------------------------------------------
    selector: str = field(default="llm", validator=_check_selector)
    forms: str = field(default="all", validator=_check_forms)
    operator: str | None = field(default=None, validator=_check_operator)
    history: bool = True
    validation: bool = True
    final_selection: bool = True
    bandit_epsilon: float = 0.1

    # ------------------------------------------------------------------------------------------
    def budget_for(self, n_train: int) -> int:
        if self.budget is not None:
            return self.budget
        return int(round(self.budget_multiplier * n_train))

    def validation_size(self, n_train: int) -> int:
        size = int(round(self.validation_frac * n_train))
        size = max(size, self.validation_min)
        if self.validation_max is not None:
            size = min(size, self.validation_max)
        return size

    def reserve_for(self, n_train: int) -> int:
        if self.reserve is not None:
            return self.reserve
        return min(1200, math.ceil(1.5 * n_train))

    def ranking_size_for(self, n_train: int) -> int:
        if self.ranking_size is not None:
            return self.ranking_size
        return min(64, max(32, n_train // 12))

    def fixed_operator(self) -> tuple[Strategy, Form] | None:
        if self.operator is None:
            return None
        s, f = self.operator.split("+")
        return Strategy[s], Form[f]

    def replace(self, **changes: object) -> Config:
        try:
            return attrs.evolve(self, **changes)
        except TypeError as exc:  # unknown field name
            raise ConfigError(str(exc)) from exc


def paper() -> Config:
    """The rules exactly as the paper's Appendix B states them."""
    return Config()


def released() -> Config:
    """The released code's variants (notes/official_stratune.md §4, §9)."""
    return Config(
        validation_min=100,
        validation_max=300,
        validation_lb_check=False,
        validation_floor=0.010,
        archive_cap=4,
        final_seats=2,
        n_candidates_i1=2,
        early_stopping=True,
        max_epochs=4,
        strategy_floors=True,
    )


PROFILES = {"paper": paper, "released": released}


def profile(name: str) -> Config:
    try:
        return PROFILES[name]()
    except KeyError:
        raise ConfigError(
            f"profile: unknown profile {name!r}; use one of {', '.join(PROFILES)}"
        ) from None
