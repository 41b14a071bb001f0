"""The released code's mechanisms that carry parameters, each an optional frozen record of
`Config` (None: off, the paper). A parameter cannot be set without its mechanism: the record
holds it.

Each record field's `key` metadata is its flat spelling (`i2_window_drafts` for
`I2Window.drafts`), read by `config/flat.py`; a new mechanism needs only its record here and its
entry in `MECHANISMS`. Its `DOC` is its row in the released-profile table of the docs.
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
class ProfileRow:
    """A released variant's row in docs/profiles.md's released-profile table, rendered by
    `replay/docs_tables.py`: the mechanism in words, the two profiles' values (a config key in
    backquotes), the released code's per-dataset values ("—": one value for every dataset) and
    the sections of docs/released-code.md it follows ("4.6")."""

    what: str
    paper: str
    released: str
    per_dataset: str = "—"
    cites: tuple[str, ...]


@frozen(kw_only=True)
class StrategyFloors:
    """Force an untried I2 at `i2_frac` of the budget, an untried I3 at `i3_frac`."""

    SWITCH: ClassVar[str] = "strategy_floors"
    DOC: ClassVar[ProfileRow] = ProfileRow(
        what="strategy-schedule floors (untried I2 at 35% of the budget, I3 at 50%)",
        paper="off (`strategy_floors`)", released="on", cites=("2.2",))
    i2_frac: float = float_field(0.35, UNIT, key="floor_i2_frac")
    i3_frac: float = float_field(0.50, UNIT, key="floor_i3_frac")


@frozen(kw_only=True)
class EarlyStopping:
    """Stop at epoch e >= 2 when epoch e-1 accepted nothing (and, with `unless_i2`, I2
    submitted no draft in it either, as the released code does)."""

    SWITCH: ClassVar[str] = "early_stopping"
    DOC: ClassVar[ProfileRow] = ProfileRow(
        what="early stopping at epoch e ≥ 2 if epoch e−1 accepted nothing",
        paper="off (`early_stopping`)",
        released="on, and only if I2 submitted nothing in epoch e−1 (`early_stop_i2`)",
        cites=("4.10",))
    unless_i2: bool = flag_field(False, key="early_stop_i2")


@frozen(kw_only=True)
class ScreenSmoke:
    """A smoke check of the candidate alone on `samples` solved samples, rejected when at least
    `broken` of them break and none is kept."""

    SWITCH: ClassVar[str] = "screen_smoke"  # the sample count; 0 is off
    DOC: ClassVar[ProfileRow] = ProfileRow(
        what=("screening smoke check: the candidate alone on 8 solved samples, rejected if ≥ 6 "
              "break and none is kept"),
        paper="off (`screen_smoke: 0`)", released="8 (`screen_smoke_broken: 6`)", cites=("4.3",))
    samples: int = int_field(8, 1, key="screen_smoke")
    broken: int = int_field(6, 1, key="screen_smoke_broken")


@frozen(kw_only=True)
class ScreenFutility:
    """Screening stage 1 on max(`stage1`, |Q_s| // 2) samples stops when losses - wins >=
    `losses` and the gain <= -eps_s."""

    SWITCH: ClassVar[str] = "screen_futility"
    DOC: ClassVar[ProfileRow] = ProfileRow(
        what=("screening stage 1: stop after max(12, |Q_s|/2) samples with losses − wins ≥ 2 "
              "and gain ≤ −ε_s"),
        paper="off (`screen_futility`)", released="on (`screen_stage1`, `screen_futility_losses`)",
        cites=("4.3",))
    stage1: int = int_field(12, 1, key="screen_stage1")
    losses: int = int_field(2, 1, key="screen_futility_losses")


@frozen(kw_only=True)
class Probation:
    """An inconclusive screening (fewer than `Config.ready_changes` wins + losses, or not clearly
    bad) is repeated on a second, disjoint set and decided on both; outright rejection needs
    LB(D, D+U) > `reject_lb`."""

    SWITCH: ClassVar[str] = "probation"
    DOC: ClassVar[ProfileRow] = ProfileRow(
        what=("probation: fewer than 6 changed samples or no clear verdict → a second, disjoint "
              "screening set, decided on both"),
        paper="off (`probation`)", released="on (`ready_changes: 6`, `probation_reject_lb: 0.65`)",
        cites=("4.3", "4.6"))
    reject_lb: float = float_field(0.65, UNIT, key="probation_reject_lb")


@frozen(kw_only=True)
class BranchSaves:
    """A ready candidate with wins and losses each >= max(2, ceil(min_frac * changes)) in >= 2
    strata each, and LB(D, D+U) <= `lb`, is saved without being accepted."""

    SWITCH: ClassVar[str] = "branch_saves"
    DOC: ClassVar[ProfileRow] = ProfileRow(
        what=("branch rule: wins and losses ≥ max(2, ⌈0.15·changes⌉), each in ≥ 2 strata → "
              "saved, not accepted"),
        paper="off (`branch_saves`)", released="on (`branch_min_frac`, `branch_lb: 0.60`)",
        cites=("4.6",))
    min_frac: float = float_field(0.15, UNIT, key="branch_min_frac")
    lb: float = float_field(0.60, UNIT, key="branch_lb")


@frozen(kw_only=True)
class DonorSalvage:
    """Before final selection, at most `donors` saved skills that ran `min_scores` samples and
    solve `min_rescues` that s_t fails lend their rules to s_t."""

    SWITCH: ClassVar[str] = "donor_salvage"
    DOC: ClassVar[ProfileRow] = ProfileRow(
        what="donor salvage before final selection (released code only)",
        paper="off (`donor_salvage`)",
        released="up to 2 donors with ≥ 3 rescues and ≥ 20 samples run", cites=("3.6",))
    donors: int = int_field(2, 1, key="salvage_donors")
    min_rescues: int = int_field(3, 1, key="salvage_min_rescues")
    min_scores: int = int_field(20, 1, key="salvage_min_scores")


@frozen(kw_only=True)
class Warmup:
    """s_0 runs on batches, generating nothing, until `solved` solved samples are known or
    `max_batches` batches have run."""

    SWITCH: ClassVar[str] = "warmup_solved"  # the count; 0 is off
    DOC: ClassVar[ProfileRow] = ProfileRow(
        what="warm-up: s0 runs batches until 18 solved samples are known",
        paper="off (`warmup_solved`)", released="on", per_dataset="LiveMath 24",
        cites=("1.2", "9.1"))
    solved: int = int_field(18, 1, key="warmup_solved")
    max_batches: int = int_field(6, 1, key="warmup_max_batches")


@frozen(kw_only=True)
class ResidualPooling:
    """A batch with fewer than `min_failures` failures borrows up to `width` known failures of
    s_t on other training samples."""

    SWITCH: ClassVar[str] = "residual_pooling"
    DOC: ClassVar[ProfileRow] = ProfileRow(
        what="residual pooling: a batch with < 6 failures borrows known failures",
        paper="off (`residual_pooling`)", released="on", cites=("2.1",))
    min_failures: int = int_field(6, 1, key="residual_min_failures")
    width: int = int_field(36, 1, key="residual_width")


@frozen(kw_only=True)
class AffordabilityGuards:
    """I2 and I3 are offered only while B - spent >= `multiplier` x what one of their rounds
    ranks."""

    SWITCH: ClassVar[str] = "affordability_guards"
    DOC: ClassVar[ProfileRow] = ProfileRow(
        what="affordability guards narrowing the strategy menu",
        paper="off (`affordability_guards`)", released="on", cites=("2.2",))
    multiplier: int = int_field(6, 1, key="guard_multiplier")


@frozen(kw_only=True)
class I2Window:
    """I2 collects drafts and submits the best `seats` of every `drafts`, each unless it scored
    more than `slack` below s~."""

    SWITCH: ClassVar[str] = "i2_window"
    DOC: ClassVar[ProfileRow] = ProfileRow(
        what="I2 window submission: 4 drafts, 2 seats, −0.02 slack", paper="off (`i2_window`)",
        released="on", cites=("3.2",))
    drafts: int = int_field(4, 1, key="i2_window_drafts")
    seats: int = int_field(2, 1, key="i2_window_seats")
    slack: float = float_field(0.02, UNIT, key="i2_window_slack")


@frozen(kw_only=True)
class RankingSmoke:
    """An I2/I3 draft runs first on `samples` ranking samples and is killed under `share` x the
    reference's ranking score."""

    SWITCH: ClassVar[str] = "ranking_smoke"  # the sample count; 0 is off
    DOC: ClassVar[ProfileRow] = ProfileRow(
        what=("I2/I3 drafts run on 12 ranking samples first and die under 0.25 × the "
              "reference's ranking score"),
        paper="off (`ranking_smoke: 0`)", released="12 (`ranking_smoke_share: 0.25`)",
        cites=("3.2", "3.3"))
    samples: int = int_field(12, 1, key="ranking_smoke")
    share: float = float_field(0.25, UNIT, key="ranking_smoke_share")


@frozen(kw_only=True)
class VerifiedFixes:
    """The first `k` failures shown carry feedback preparation's blind solve."""

    SWITCH: ClassVar[str] = "verified_fixes"
    DOC: ClassVar[ProfileRow] = ProfileRow(
        what="verified fixes: blind solves of the first 8 lessons (released code only)",
        paper="off (`verified_fixes`)", released="on", cites=("3.7",))
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
