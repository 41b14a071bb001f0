"""One frozen `Config` with every knob. Defaults are the paper's values (profile `paper`);
the released code's variants form the named profile `released` (docs/design.md, "Profiles").
No module reads a global: the config is passed down.

Every field is checked at construction (type, range, finiteness), and fields that depend on
each other are checked together, so a wrong value is a one-line `ConfigError` naming the field
before anything is spent. The ablation fields keep their command-line spellings as input
(`selector="fixed:I1"`) and hold typed records.
"""

from __future__ import annotations

import math
from typing import Any

import attrs
from attrs import field, frozen

from stratune_core.config.checks import (
    enum_value,
    flag_field,
    float_field,
    int_field,
    naming,
    non_empty_text,
    number,
)
from stratune_core.config.flat import flat_changes
from stratune_core.config.mechanisms import (
    AffordabilityGuards,
    BranchSaves,
    DonorSalvage,
    EarlyStopping,
    I2Window,
    Probation,
    RankingSmoke,
    ResidualPooling,
    ScreenFutility,
    ScreenSmoke,
    StrategyFloors,
    VerifiedFixes,
    Warmup,
    to_record,
)
from stratune_core.config.operators import Operator, to_form_menu, to_operator
from stratune_core.records.enums import Form, FormMenu, ReserveRule
from stratune_core.records.errors import ConfigError
from stratune_core.selection.selectors.adaptive import LLMSelector
from stratune_core.selection.selectors.base import Selector
from stratune_core.selection.selectors.registry import to_selector

UNIT = number(0.0, 1.0)  # a fraction, a score difference or a probability


def round_half_up(value: float) -> int:
    """The paper's round(): a half goes up (round(0.3 * 15) = 5), where Python's `round` goes
    to the even neighbour (4). The 1e-9 absorbs float error (0.3 * 45 = 13.499999999999998)."""
    return math.floor(value + 0.5 + 1e-9)


_int, _float, _flag = int_field, float_field, flag_field
# Upper bounds of sizes no model or run can use: candidates drafted per round (each is an
# optimizer call and a screening), a reply's tokens, a prompt's tokens.
MAX_CANDIDATES = 64
MAX_OUTPUT_TOKENS = 1_000_000
MAX_CONTEXT_TOKENS = 100_000_000


def _mechanism(name: str) -> Any:
    """A released mechanism's record, off (None) by default; True turns it on at its
    defaults."""
    return field(default=None, converter=to_record(name))


@frozen(kw_only=True)
class Config:
    # --- run ------------------------------------------------------------------------------
    seed: int = _int(0, 0)  # numpy SeedSequence needs >= 0
    target_model: str = field(default="target", validator=non_empty_text)
    optimizer_model: str = field(default="optimizer", validator=non_empty_text)
    budget: int | None = _int(None, 1)  # None: multiplier * |train|
    budget_multiplier: float = _float(6.0, number(0.0, low_open=True))
    n_batches: int = _int(16, 1)  # N_Q
    # the seed of the batch order alone (None: the run seed); a Replay run follows another run's
    # strategies on batches in another order (paper §4.1) while everything else keeps the seed
    batch_order_seed: int | None = _int(None, 0)
    max_rounds: int | None = _int(None, 1)
    # stop after this many consecutive rounds in which every candidate the optimizer wrote was
    # refused before evaluation (unparseable, a patch that does not apply, ...): an optimizer
    # that cannot follow the format. None: never (what runs recorded before the rule read as)
    max_unusable_rounds: int | None = _int(3, 1, none=True)
    # a form whose every candidate in a round was refused before evaluation (for its form or
    # its content) is not offered the next round: a weak optimizer otherwise kept choosing F2
    # and writing rules where F2 needs copied examples until the unusable rounds ended the run;
    # runs recorded before it ran without it
    rest_refused_form: bool = _flag(True)

    # --- candidate evaluation (App. B) ------------------------------------------------------
    eps0: float | None = _float(None, number(0.0, 1.0, optional=True))  # None: the task's floor
    eps_v: float = _float(0.01, UNIT)
    delta: float = _float(0.10, number(0.0, 1.0, low_open=True))
    z: float = _float(1.2816, number(0.0, low_open=True))
    lb_limit: float = _float(0.5, UNIT)
    screen_solved: int = _int(18, 0)
    screen_random: int = _int(18, 0)
    validation_frac: float = _float(0.3, number(0.0, 1.0, low_open=True))
    validation_min: int = _int(0, 0)  # released: 100
    validation_max: int | None = _int(None, 1)  # released: 300
    # LB(D, D+U) <= 1/2 in validation: both the paper and the released code check it; False is
    # an ablation switch only
    validation_lb_check: bool = _flag(True)
    validation_floor: float = _float(0.0, UNIT)  # released: eps_v is max(eps0, 0.010)
    # on a training set too small for both sets at full size, the paper keeps |Q_v| and screens
    # on what is left; the released code keeps Q_s at its quota and validates on what is left
    screening_keeps_quota: bool = _flag(False)
    # the random part of Q_s also takes what the solved part falls short of its quota (paper:
    # Q_s keeps its size while few solved samples are known); the released code does not
    screen_top_up: bool = _flag(True)
    # a Q_s with less room than both quotas is split in their ratio instead of filled with
    # solved samples first, which on a small training set left no failing sample to screen on
    # (`evaluation/sets._solved_share`); runs recorded before it ran without it
    screen_split_room: bool = _flag(True)
    # released screening-set bookkeeping (`evaluation/screen_usage.py`): the solved quota is
    # min(screen_solved, max(screen_solved_min, known solved // 3)); a sample serves at most
    # max_solved_uses times in solved parts and max_random_uses times in random parts; a set
    # whose part holds under screen_ready_share of its quota waits a round (None: off)
    screen_solved_min: int | None = _int(None, 0)  # released 6
    max_solved_uses: int | None = _int(None, 1)  # released 6
    max_random_uses: int | None = _int(None, 1)  # released 3
    # the solved examples shown to the optimizer are kept out of a candidate's sets only when
    # its own form uses them (F2 in I1/I3, F1-F3 in I2), as in the released code; the paper
    # profile keeps them out whenever they were shown
    exclude_by_form: bool = _flag(False)
    screen_ready_share: float | None = _float(None, number(0.0, 1.0, optional=True))  # 0.7

    # --- saved candidates and final selection ------------------------------------------------
    # App. B: the saved pool is maintained as in the released code, at most 4 (released rule)
    archive_cap: int | None = _int(4, 1, none=True)  # None: no cap
    final_seats: int | None = _int(None, 1)  # released: 2 contenders (App. B: every saved one)
    final_select_frac: float = _float(0.6, number(0.0, 1.0, low_open=True, high_open=True))
    final_gain_floor: float = _float(0.01, UNIT)
    reserve_rule: ReserveRule = field(default=ReserveRule.EXACT,
                                      converter=enum_value("reserve_rule", ReserveRule))
    reserve: int | None = _int(None, 0)  # a fixed reserve, under either rule when set
    success_threshold: float | None = _float(None, number(0.0, 1.0, optional=True))  # None: task's

    # --- strategies and forms ----------------------------------------------------------------
    n_candidates_i1: int = _int(1, 1, MAX_CANDIDATES)  # released: 2
    i3_k: int = _int(3, 1, MAX_CANDIDATES)
    i3_submit_max: int = _int(2, 1, 2)  # the best draft and the runner-up
    i3_runner_up_slack: float = _float(0.02, UNIT)
    ranking_size: int | None = _int(None, 1)  # None: min(64, max(32, n//12))
    # a draft becomes s~ if its screening gain >= -max(band, 1.5 eps)
    i2_advance_band: float = _float(0.010, UNIT)
    max_edits: int = _int(6, 1)
    rewrite_factor: int = _int(4, 1)
    rewrite_slack_chars: int = _int(10_000, 0)
    max_failures_shown: int = _int(12, 1)  # 0 would skip every round
    max_solved_offered: int = _int(10, 0)
    optimizer_max_tokens: int = _int(16384, 1, MAX_OUTPUT_TOKENS)

    # --- optimizer prompts (docs/design.md, "Optimizer prompts") --------------------------
    # Every optimizer request's input is built to this many (estimated) tokens; the shell
    # lowers it to a local model's context window (replay/models/prompt_fit.py).
    prompt_tokens: int = _int(32_000, 1_000, MAX_CONTEXT_TOKENS)
    feedback_preparation: bool = _flag(True)  # diagnose failures before generation (App. D.4)
    successes_prepared: int = _int(3, 0)  # successful trajectories summarised per preparation

    # --- released-code mechanisms (`config/mechanisms.py`; None: off, the paper) ------------
    strategy_floors: StrategyFloors | None = _mechanism("strategy_floors")
    early_stopping: EarlyStopping | None = _mechanism("early_stopping")
    max_epochs: int | None = _int(None, 1)  # released: 4
    screen_smoke: ScreenSmoke | None = _mechanism("screen_smoke")
    screen_futility: ScreenFutility | None = _mechanism("screen_futility")
    probation: Probation | None = _mechanism("probation")
    # a screening is ready (conclusive) with at least this many wins + losses: probation's
    # and the branch rule's threshold
    ready_changes: int = _int(6, 1)
    branch_saves: BranchSaves | None = _mechanism("branch_saves")
    save_needs_wins: bool = _flag(False)  # the save rule also needs wins >= losses (released)
    # released decision: acceptance and saving allow at most this many regressions among the
    # random part of Q_s, and one more rejects at once (None: no such check; released 1)
    guard_severe_max: int | None = _int(None, 0)
    # released decision: the task's auxiliary metric (exact match, action F1, cell accuracy,
    # parsed) may not drop by more than eps_guard = min(0.01, eps_s) for acceptance (else
    # probation) nor by more than 2 eps_guard at all
    aux_guardrail: bool = _flag(False)
    validation_futility: int = _int(0, 0)  # stop validation if the first N show a loss (80)
    # --- released: the saved pool and final selection ------------------------------------
    initial_in_pool: bool = _flag(False)  # s0 is saved from the start (a final contender)
    final_floor_samples: float = _float(0.0, number(0.0))  # floor >= this / |train| (2)
    final_min_common: int = _int(0, 0)  # a contender needs this many samples common with s_t
    donor_salvage: DonorSalvage | None = _mechanism("donor_salvage")

    # --- released-code round mechanisms (docs/design.md, "Profiles"; all off in the paper) ---
    warmup: Warmup | None = _mechanism("warmup")
    residual_pooling: ResidualPooling | None = _mechanism("residual_pooling")
    # extra blocks of E_t in the optimizer prompts (`round/extras.py`)
    feedback_contrast: bool = _flag(False)  # solved samples the revision must not break
    feedback_longitudinal: bool = _flag(False)  # s_t against s_0: improved, regressed, persistent
    feedback_trajectories: bool = _flag(False)  # solved multi-step samples, step by step
    feedback_gold_pairs: bool = _flag(False)  # solved input -> gold pairs whatever the form
    feedback_global_stats: bool = _flag(False)  # answer-option base rates (livemath_opus)
    # the selection prompt's history as the released code's "past revisions": per strategy the
    # latest success and the latest failure, totals per form; the paper lists every attempt
    past_revisions: bool = _flag(False)
    affordability_guards: AffordabilityGuards | None = _mechanism("affordability_guards")
    i2_window: I2Window | None = _mechanism("i2_window")
    ranking_smoke: RankingSmoke | None = _mechanism("ranking_smoke")
    verified_fixes: VerifiedFixes | None = _mechanism("verified_fixes")
    keep_refinement_on_accept: bool = _flag(False)  # an I1/I3 acceptance keeps s~
    # a batch without failures (after pooling) runs I2 when a refinement is under way, instead
    # of skipping the round (released code: I2 critiques its batch whatever the scores)
    i2_without_failures: bool = _flag(False)

    # --- ablations (paper §4.1; docs/design.md, "Ablations") ----------------------------------
    selector: Selector = field(default=LLMSelector(), converter=naming("selector", to_selector))
    forms: FormMenu = field(default=FormMenu.ALL, converter=naming("forms", to_form_menu))
    operator: Operator | None = field(default=None, converter=naming("operator", to_operator))
    history: bool = _flag(True)
    validation: bool = _flag(True)
    final_selection: bool = _flag(True)
    bandit_epsilon: float = _float(0.1, UNIT)

    def __attrs_post_init__(self) -> None:
        """Checks that need two fields; each names the field to change."""
        if self.validation_max is not None and self.validation_min > self.validation_max:
            raise ConfigError(
                f"validation_min: {self.validation_min} exceeds validation_max "
                f"{self.validation_max}; lower one or raise the other", field="validation_min")
        if self.budget is not None and self.reserve is not None and self.reserve >= self.budget:
            raise ConfigError(
                f"reserve: {self.reserve} executions leave nothing of budget {self.budget} for "
                "the rounds; lower reserve or raise budget", field="reserve")
        if self.screen_solved + self.screen_random == 0:
            raise ConfigError(
                "screen_random: screening needs at least one sample (screen_solved and "
                "screen_random are both 0)", field="screen_random")
        if self.verified_fixes is not None and not self.feedback_preparation:
            raise ConfigError(
                "verified_fixes: the blind solves it shows come from feedback preparation; set "
                "feedback_preparation true or verified_fixes false", field="verified_fixes")
        if self.operator is not None:
            if not isinstance(self.selector, LLMSelector):
                raise ConfigError(
                    f"operator: a fixed operator ({self.operator}) also fixes the strategy, so "
                    f"selector must stay 'llm', not '{self.selector}'", field="operator")
            if self.forms is FormMenu.F4 and self.operator.form is not Form.F4:
                raise ConfigError(
                    f"operator: {self.operator} uses {self.operator.form.value} but forms is "
                    "'F4'; use an F4 operator or forms 'all'", field="operator")

    # ------------------------------------------------------------------------------------------
    @property
    def batch_order(self) -> int:
        """The seed the training batches are dealt with."""
        return self.seed if self.batch_order_seed is None else self.batch_order_seed

    def budget_for(self, n_train: int) -> int:
        if self.budget is not None:
            return self.budget
        return round_half_up(self.budget_multiplier * n_train)

    def validation_size(self, n_train: int) -> int:
        size = round_half_up(self.validation_frac * n_train)
        size = max(size, self.validation_min)
        if self.validation_max is not None:
            size = min(size, self.validation_max)
        return size

    def reserve_for(self, n_train: int) -> int | None:
        """The fixed reserve, or None when the reserve is exact (computed as the run goes)."""
        if self.reserve is not None:
            return self.reserve
        if self.reserve_rule is ReserveRule.FIXED:
            return min(1200, math.ceil(1.5 * n_train))
        return None

    def ranking_size_for(self, n_train: int) -> int:
        if self.ranking_size is not None:
            return self.ranking_size
        return min(64, max(32, n_train // 12))

    def replace(self, **changes: object) -> Config:
        """`changes` may name a mechanism's parameter by its flat key (`i2_window_drafts=2`)
        when the mechanism is on (or turned on by `changes`)."""
        direct = flat_changes(self, changes)
        try:
            return attrs.evolve(self, **direct)
        except TypeError as exc:  # unknown field name
            raise ConfigError(str(exc)) from exc
