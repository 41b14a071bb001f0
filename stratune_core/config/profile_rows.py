"""The rows of docs/profiles.md's released-profile table for the released variants that are
plain `Config` fields (a released mechanism with parameters carries its row as its record's
`DOC`, `config/mechanisms.py`), and the table's order. `replay/docs_tables.py` renders it.

A row is keyed by the field it describes first; the fields it also names (in backquotes) need
no row of their own.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from stratune_core.config.knobs import Config
from stratune_core.config.mechanisms import MECHANISMS, ProfileRow

FIELD_ROWS: Mapping[str, ProfileRow] = {
    "feedback_contrast": ProfileRow(
        what="contrast samples (solved ones not to break) in the feedback",
        paper="off (`feedback_contrast`)", released="on", cites=("2.1",)),
    "feedback_longitudinal": ProfileRow(
        what="longitudinal block: improved / regressed / persistent since epoch 0",
        paper="off (`feedback_longitudinal`)", released="on", cites=("2.1",)),
    "feedback_trajectories": ProfileRow(
        what="trajectories of solved tasks, gold actions marked",
        paper="off (`feedback_trajectories`)", released="on", per_dataset="Mind2Web only",
        cites=("2.1",)),
    "feedback_gold_pairs": ProfileRow(
        what="gold pairs (`Q -> A` lines of solved samples)", paper="off (`feedback_gold_pairs`)",
        released="on", per_dataset="— (the released code: DocVQA, LiveMath only)", cites=("2.1",)),
    "feedback_global_stats": ProfileRow(
        what="answer options' base rates over the training set",
        paper="off (`feedback_global_stats`)", released="off", per_dataset="`livemath_opus`: on",
        cites=("2.1", "9.1")),
    "past_revisions": ProfileRow(
        what="the selection prompt's history rows",
        paper="every attempt, newest first, and by selected form (`past_revisions`)",
        released="per strategy the latest success and the latest failure", cites=("2.4",)),
    "i2_without_failures": ProfileRow(
        what=("a batch without failures (after pooling) still takes an I2 step when a "
              "refinement is under way"),
        paper="skipped (`i2_without_failures`)", released="on", cites=("2.2",)),
    "n_candidates_i1": ProfileRow(
        what="I1 candidates per call", paper="1 (`n_candidates_i1`)", released="2, in two forms",
        cites=("3.1",)),
    "keep_refinement_on_accept": ProfileRow(
        what="refinement kept when an I1 or I3 candidate is accepted",
        paper="off (`keep_refinement_on_accept`)", released="on", cites=("3.2",)),
    "ranking_size": ProfileRow(
        what="I2/I3 ranking subset", paper="min(64, max(32, n//12)) (`ranking_size`)",
        released="same", per_dataset="Mind2Web 96", cites=("3.2", "9.1")),
    "success_threshold": ProfileRow(
        what="success threshold of continuous scores", paper="0.9 (the task's, App. D)",
        released="same", per_dataset="Mind2Web 0.8 (`success_threshold`)", cites=("4.1",)),
    "screen_solved": ProfileRow(
        what="screening quotas solved + random",
        paper="18 + 18 (`screen_solved`, `screen_random`)", released="same",
        per_dataset="LiveMath 24 + 24 (both profiles)", cites=("4.2", "9.1")),
    "save_needs_wins": ProfileRow(
        what="saving also needs wins ≥ losses", paper="no (`save_needs_wins`)", released="yes",
        cites=("4.6",)),
    "guard_severe_max": ProfileRow(
        what=("at most 1 regression among the random part of Q_s (`guard_severe`) to accept or "
              "save; 2 reject at once"),
        paper="off (`guard_severe_max`)", released="1", cites=("4.4", "4.6")),
    "aux_guardrail": ProfileRow(
        what=("auxiliary guardrail metric (exact match, action F1, cell accuracy, parsed): a "
              "drop below −ε_guard = −min(0.01, ε_s) sends an acceptable candidate to "
              "probation, below −2ε_guard it is never accepted"),
        paper="off (`aux_guardrail`)", released="on", cites=("4.4", "4.6")),
    "screening_keeps_quota": ProfileRow(
        what=("a small training set: Q_s keeps its quota, validation takes what is left (no "
              "random top-up of a short solved part)"),
        paper="Q_v keeps its size, Q_s takes the rest (`screening_keeps_quota`, `screen_top_up`)",
        released="on", cites=("4.2", "4.7")),
    "screen_split_room": ProfileRow(
        what=("a Q_s with less room than both quotas: the room split in their ratio, so that "
              "failing samples are screened too (a departure: docs/departures.md)"),
        paper="split (`screen_split_room`)", released="solved part first", cites=("4.2",)),
    "screen_solved_min": ProfileRow(
        what="solved quota min(18, max(6, known solved // 3))", paper="18 (`screen_solved_min`)",
        released="6", cites=("4.2",)),
    "max_solved_uses": ProfileRow(
        what="usage caps: a sample in at most 6 solved parts and 3 random parts of screening sets",
        paper="none (`max_solved_uses`, `max_random_uses`)", released="6, 3", cites=("4.2",)),
    "screen_ready_share": ProfileRow(
        what=("a part of Q_s under 70 % of its quota: screened next round, then insufficient "
              "evidence"),
        paper="never (`screen_ready_share`)", released="0.7", cites=("4.2",)),
    "exclude_by_form": ProfileRow(
        what=("offered solved examples kept out of a candidate's sets only for the forms that "
              "use them (F2 in I1/I3, F1–F3 in I2)"),
        paper="whenever shown (`exclude_by_form`)", released="on", cites=("3.1", "3.2", "4.2")),
    "validation_min": ProfileRow(
        what="validation size", paper="round(0.3·n)",
        released=("clamped to [100, 300] (`validation_min`, `validation_max`), at most what the "
                  "batch and Q_s leave"),
        cites=("4.7",)),
    "validation_floor": ProfileRow(
        what="validation threshold", paper="ε_v = 0.01",
        released="max(ε_0, 0.010) (`validation_floor`)", cites=("4.7",)),
    "validation_futility": ProfileRow(
        what="validation futility: stop after 80 samples with a negative gain",
        paper="off (`validation_futility: 0`)", released="80", cites=("4.7",)),
    "max_epochs": ProfileRow(
        what="most epochs", paper="no limit (`max_epochs`)", released="4",
        per_dataset="LiveMath 6", cites=("4.10", "9.1")),
    "reserve_rule": ProfileRow(
        what="reserve for final selection", paper="exact (`reserve_rule`)",
        released="min(1200, ⌈1.5·n⌉)", per_dataset="Mind2Web 2400 (`reserve`)", cites=("5", "9.1")),
    "archive_cap": ProfileRow(
        what="saved pool", paper="at most 4 (`archive_cap`)", released="same",
        per_dataset="Mind2Web 8", cites=("4.11",)),
    "initial_in_pool": ProfileRow(
        what="s0 starts in the saved pool", paper="no (`initial_in_pool`)", released="yes",
        cites=("4.11",)),
    "final_seats": ProfileRow(
        what="final-selection seats",
        paper="every saved candidate (`final_seats`, `final_min_common`)",
        released="the best 2 by paired gain, each with ≥ 20 samples run in common with s_t",
        per_dataset="Mind2Web 3", cites=("4.11",)),
    "final_floor_samples": ProfileRow(
        what="final-selection gain floor", paper="0.01 (`final_gain_floor`)",
        released="max(0.010, 2/n) (`final_floor_samples: 2`)", cites=("4.11",)),
}


def _section(number: str) -> tuple[int, ...]:
    return tuple(int(part) for part in number.split("."))


def released_rows() -> list[tuple[str, ProfileRow]]:
    """(Config field, row) for every row, in the order of the released code's description
    (the first section a row cites), then of the `Config` fields."""
    rows = {**{name: record.DOC for name, record in MECHANISMS.items()}, **FIELD_ROWS}
    place = {a.name: i for i, a in enumerate(attrs.fields(Config))}
    return sorted(rows.items(), key=lambda item: (_section(item[1].cites[0]), place[item[0]]))
