"""The released code's mechanisms that carry parameters, each an optional frozen record of
`Config` (None: off, the paper). A parameter cannot be set without its mechanism: the record
holds it.

Each record field's `key` metadata is its flat spelling (`i2_window_drafts` for
`I2Window.drafts`), read by `config/flat.py`; a new mechanism needs only its record here and its
entry in `MECHANISMS`.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any, ClassVar, TypeVar

import attrs
from attrs import frozen

from stratune_core.config.checks import flag_field, float_field, int_field, key_of, number
from stratune_core.records.errors import ConfigError, CoreInvariantError

UNIT = number(0.0, 1.0)
T = TypeVar("T")


@frozen(kw_only=True)
class StrategyFloors:
    """Force an untried I2 at `i2_frac` of the budget, an untried I3 at `i3_frac`."""

    SWITCH: ClassVar[str] = "strategy_floors"
    i2_frac: float = float_field(0.35, UNIT, key="floor_i2_frac")
    i3_frac: float = float_field(0.50, UNIT, key="floor_i3_frac")


@frozen(kw_only=True)
class EarlyStopping:
    """Stop at epoch e >= 2 when epoch e-1 accepted nothing (and, with `unless_i2`, I2
    submitted no draft in it either, as the released code does)."""

    SWITCH: ClassVar[str] = "early_stopping"
    unless_i2: bool = flag_field(False, key="early_stop_i2")


@frozen(kw_only=True)
class ScreenSmoke:
    """A smoke check of the candidate alone on `samples` solved samples, rejected when at least
    `broken` of them break and none is kept."""

    SWITCH: ClassVar[str] = "screen_smoke"  # the sample count; 0 is off
    samples: int = int_field(8, 1, key="screen_smoke")
    broken: int = int_field(6, 1, key="screen_smoke_broken")


@frozen(kw_only=True)
class ScreenFutility:
    """Screening stage 1 on max(`stage1`, |Q_s| // 2) samples stops when losses - wins >=
    `losses` and the gain <= -eps_s."""

    SWITCH: ClassVar[str] = "screen_futility"
    stage1: int = int_field(12, 1, key="screen_stage1")
    losses: int = int_field(2, 1, key="screen_futility_losses")


@frozen(kw_only=True)
class Probation:
    """An inconclusive screening (fewer than `Config.ready_changes` wins + losses, or not clearly
    bad) is repeated on a second, disjoint set and decided on both; outright rejection needs
    LB(D, D+U) > `reject_lb`."""

    SWITCH: ClassVar[str] = "probation"
    reject_lb: float = float_field(0.65, UNIT, key="probation_reject_lb")


@frozen(kw_only=True)
class BranchSaves:
    """A ready candidate with wins and losses each >= max(2, ceil(min_frac * changes)) in >= 2
    strata each, and LB(D, D+U) <= `lb`, is saved without being accepted."""

    SWITCH: ClassVar[str] = "branch_saves"
    min_frac: float = float_field(0.15, UNIT, key="branch_min_frac")
    lb: float = float_field(0.60, UNIT, key="branch_lb")


@frozen(kw_only=True)
class DonorSalvage:
    """Before final selection, at most `donors` saved skills that ran `min_scores` samples and
    solve `min_rescues` that s_t fails lend their rules to s_t."""

    SWITCH: ClassVar[str] = "donor_salvage"
    donors: int = int_field(2, 1, key="salvage_donors")
    min_rescues: int = int_field(3, 1, key="salvage_min_rescues")
    min_scores: int = int_field(20, 1, key="salvage_min_scores")


@frozen(kw_only=True)
class Warmup:
    """s_0 runs on batches, generating nothing, until `solved` solved samples are known or
    `max_batches` batches have run."""

    SWITCH: ClassVar[str] = "warmup_solved"  # the count; 0 is off
    solved: int = int_field(18, 1, key="warmup_solved")
    max_batches: int = int_field(6, 1, key="warmup_max_batches")


@frozen(kw_only=True)
class ResidualPooling:
    """A batch with fewer than `min_failures` failures borrows up to `width` known failures of
    s_t on other training samples."""

    SWITCH: ClassVar[str] = "residual_pooling"
    min_failures: int = int_field(6, 1, key="residual_min_failures")
    width: int = int_field(36, 1, key="residual_width")


@frozen(kw_only=True)
class AffordabilityGuards:
    """I2 and I3 are offered only while B - spent >= `multiplier` x what one of their rounds
    ranks."""

    SWITCH: ClassVar[str] = "affordability_guards"
    multiplier: int = int_field(6, 1, key="guard_multiplier")


@frozen(kw_only=True)
class I2Window:
    """I2 collects drafts and submits the best `seats` of every `drafts`, each unless it scored
    more than `slack` below s~."""

    SWITCH: ClassVar[str] = "i2_window"
    drafts: int = int_field(4, 1, key="i2_window_drafts")
    seats: int = int_field(2, 1, key="i2_window_seats")
    slack: float = float_field(0.02, UNIT, key="i2_window_slack")


@frozen(kw_only=True)
class RankingSmoke:
    """An I2/I3 draft runs first on `samples` ranking samples and is killed under `share` x the
    reference's ranking score."""

    SWITCH: ClassVar[str] = "ranking_smoke"  # the sample count; 0 is off
    samples: int = int_field(12, 1, key="ranking_smoke")
    share: float = float_field(0.25, UNIT, key="ranking_smoke_share")


@frozen(kw_only=True)
class VerifiedFixes:
    """The first `k` failures shown carry feedback preparation's blind solve."""

    SWITCH: ClassVar[str] = "verified_fixes"
    k: int = int_field(8, 1, key="verified_fixes_k")


# Config field -> its record
MECHANISMS: Mapping[str, type] = {
    "strategy_floors": StrategyFloors,
    "early_stopping": EarlyStopping,
    "screen_smoke": ScreenSmoke,
    "screen_futility": ScreenFutility,
    "probation": Probation,
    "branch_saves": BranchSaves,
    "donor_salvage": DonorSalvage,
    "warmup": Warmup,
    "residual_pooling": ResidualPooling,
    "affordability_guards": AffordabilityGuards,
    "i2_window": I2Window,
    "ranking_smoke": RankingSmoke,
    "verified_fixes": VerifiedFixes,
}


@frozen
class Param:
    """A flat key's place: the mechanism's Config field and the record's field."""

    mechanism: str
    name: str

    @property
    def is_switch(self) -> bool:
        """A count that is also the switch (`warmup_solved`; 0 turns the mechanism off)."""
        return key_of(attrs.fields_dict(MECHANISMS[self.mechanism])[self.name]) \
            == MECHANISMS[self.mechanism].SWITCH


@functools.cache
def flat_keys() -> dict[str, Param]:
    """Every parameter's flat key -> where it lives."""
    return {key_of(a): Param(mechanism, a.name)
            for mechanism, record in MECHANISMS.items() for a in attrs.fields(record)}


def counted(mechanism: str) -> bool:
    """A mechanism switched by a count (0 off) rather than by true/false."""
    return MECHANISMS[mechanism].SWITCH in flat_keys()


def defaults(mechanism: str) -> dict[str, Any]:
    record = MECHANISMS[mechanism]
    return {a.name: a.default for a in attrs.fields(record)}


def to_record(mechanism: str) -> Any:
    """An attrs converter: None is off; a switch's True is the record at its defaults and False
    is off; a count that switches (`screen_smoke`) turns it off at 0 and sets the count else."""
    record = MECHANISMS[mechanism]

    def convert(value: Any) -> Any:
        if value is None or isinstance(value, record):
            return value
        if counted(mechanism) and isinstance(value, int) and not isinstance(value, bool):
            name = next(p.name for k, p in flat_keys().items() if k == record.SWITCH)
            return None if value == 0 else record(**{name: value})
        if not counted(mechanism) and isinstance(value, bool):
            return record() if value else None
        what = "a whole number" if counted(mechanism) else "true, false"
        raise ConfigError(f"{mechanism}: must be {what}, null or a {record.__name__}, got "
                          f"{value!r:.40}", field=mechanism)

    return convert


def active(record: T | None) -> T:
    """A mechanism's record where the caller runs only with the mechanism on."""
    if record is None:
        raise CoreInvariantError("a released mechanism's step ran with the mechanism off")
    return record
