"""Enumerations shared by the core: strategies, forms, decisions, reasons."""

from __future__ import annotations

import enum


class Strategy(enum.Enum):
    """Search strategies (paper §3.1, App. A.1)."""

    I1 = "I1"  # direct revision
    I2 = "I2"  # iterative refinement
    I3 = "I3"  # parallel sampling


class Form(enum.Enum):
    """Revision forms (paper Table 4)."""

    F1 = "F1"  # conditional rules
    F2 = "F2"  # worked examples
    F3 = "F3"  # reasoning procedure
    F4 = "F4"  # full rewrite


class Stage(enum.Enum):
    SCREENING = "screening"
    VALIDATION = "validation"
    FINAL_SELECTION = "final_selection"
    FINAL_CONFIRMATION = "final_confirmation"


class Verdict(enum.Enum):
    """What candidate evaluation decided for one candidate."""

    ACCEPTED = "accepted"  # passed screening and validation: replaces s_t
    SAVED = "saved"  # regression checks passed with 0 < gain < eps_s: kept for final selection
    REJECTED_SCREENING = "rejected_screening"
    REJECTED_VALIDATION = "rejected_validation"
    INVALID = "invalid"  # the patch or its grounding failed before any budget was spent
    UNAFFORDABLE = "unaffordable"  # the evaluation could not be paid for within the budget
    NOT_SUBMITTED = "not_submitted"  # an I2/I3 draft that lost the ranking on the common subset


class Reason(enum.Enum):
    """Why a check failed (or why a candidate never reached evaluation)."""

    GAIN_BELOW_THRESHOLD = "gain_below_threshold"
    MORE_LOSSES_THAN_WINS = "more_losses_than_wins"
    REGRESSIONS_AMONG_SOLVED = "regressions_among_solved"  # LB(D, S) > 1/2
    LOSSES_AMONG_CHANGES = "losses_among_changes"  # LB(D, D+U) > 1/2
    INVALID_PATCH = "invalid_patch"
    UNGROUNDED_EXAMPLE = "ungrounded_example"
    FORMAT_CHANGED = "format_changed"
    PARTS_CHANGED = "parts_changed"  # a multi-part skill's candidate dropped, added or moved a part
    SCRIPT_SYNTAX = "script_syntax"  # a learned script that does not parse
    PLACEHOLDER_DROPPED = "placeholder_dropped"  # a template's placeholder is gone (`TaskInfo`)
    REWRITE_TOO_LONG = "rewrite_too_long"
    UNCHANGED = "unchanged"
    DUPLICATE = "duplicate"
    UNPARSEABLE = "unparseable"
    EMPTY_SET = "empty_set"
    UNAFFORDABLE = "unaffordable"
    # the released profile's screening and validation (docs/design.md, "Released profile")
    SMOKE_BROKEN = "smoke_broken"  # the smoke check broke solved samples and kept none
    FUTILITY = "futility"  # a first stage already showed a loss; the rest was not run
    TOO_FEW_CHANGES = "too_few_changes"  # fewer wins + losses than `ready_changes`
    SET_NOT_READY = "set_not_ready"  # a part of Q_s under 70 % of its quota: next round
    INSUFFICIENT_EVIDENCE = "insufficient_evidence"  # ... and again in the next round


class StopReason(enum.Enum):
    BUDGET = "budget"
    EARLY_STOP = "early_stop"
    MAX_ROUNDS = "max_rounds"
    MAX_EPOCHS = "max_epochs"
    NO_PROGRESS = "no_progress"  # a whole epoch of rounds spent nothing: nothing left to learn
    COMPLETED = "completed"  # a baseline's procedure ended before its budget
    # `max_unusable_rounds` rounds in a row gave no candidate that could be evaluated, or a
    # method's own cause of the same end (its entry's `stop_notes` says which)
    NO_USABLE_CANDIDATES = "no_usable_candidates"


# The enums below are written into events and rendered by the shell as text, so they are
# `StrEnum`s: the trace holds their values, and f-strings and `str()` show the value too.


class FormMenu(enum.StrEnum):
    """The `forms` ablation: which revision forms the optimizer may use (paper §4.1)."""

    ALL = "all"
    F4 = "F4"  # full rewrites only


class ReserveRule(enum.StrEnum):
    """How much budget is held back for final skill selection (docs/design.md, "Budget")."""

    EXACT = "exact"  # the new executions final selection needs for the saved pool (paper)
    FIXED = "fixed"  # the released code's min(1200, ceil(1.5 n)), or `reserve` if set


class ChoiceRule(enum.StrEnum):
    """A rule that decided a round's operator instead of the configured selector."""

    FIRST_ROUND = "first-round"  # no history yet: the first round is I1
    STRATEGY_FLOOR = "strategy-floor"  # the released code's floors (strategy_floors.py)
    OPERATOR = "operator"  # a fixed operator (strategy + form) from the config
    NOT_RECORDED = "not-recorded"  # replay: the recorded run chose nothing in this round
    AFFORDABILITY = "affordability-guard"  # the released code's guards left only I1 on the menu
    NO_FAILURES = "no-failures-i2"  # released: a batch without failures continues a refinement


class Purpose(enum.StrEnum):
    """What a group of target executions paid for."""

    FEEDBACK = "feedback"  # s_t on the round's batch (E_t)
    REFINEMENT_FEEDBACK = "refinement_feedback"  # I2: the intermediate skill on the batch
    RANKING = "ranking"  # I2/I3 drafts and their reference on the ranking subset
    SCREENING = "screening"
    VALIDATION = "validation"
    FINAL_SELECTION = "final_selection"


class SkipReason(enum.StrEnum):
    """Why a round made no operator choice."""

    NO_FAILURES = "no failures on the batch"
    NO_EXAMPLES = "F2 has no material this round"  # a fixed F2 operator, no solved sample


class CheckName(enum.StrEnum):
    """The gates of candidate evaluation (paper App. B), as named in `Outcome.checks`."""

    GAIN = "gain"  # gain >= threshold
    GAIN_POSITIVE = "gain_positive"  # gain > 0 (final confirmation)
    WINS_VS_LOSSES = "wins_vs_losses"
    LB_D_S = "lb_d_s"  # LB(D, S) <= limit
    LB_D_DU = "lb_d_du"  # LB(D, D+U) <= limit


class SeatRule(enum.StrEnum):
    """Why a saved candidate got no seat in final skill selection (released profile)."""

    SEATS = "seats"  # `final_seats` better candidates took the seats
    COMMON = "common"  # fewer than `final_min_common` samples run by both it and s_t
