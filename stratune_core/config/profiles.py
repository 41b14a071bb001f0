"""The two profiles, each a function building a `Config`: `paper` (the rules exactly as the
paper's Appendix B states them, every default of `Config`) and `released` (the released code's
variants, docs/design.md "Profiles")."""

from __future__ import annotations

from stratune_core.config.knobs import Config
from stratune_core.config.mechanisms import EarlyStopping, RankingSmoke, ScreenSmoke, Warmup
from stratune_core.records.enums import ReserveRule
from stratune_core.records.errors import ConfigError


def paper() -> Config:
    """The rules exactly as the paper's Appendix B states them."""
    return Config()


def released() -> Config:
    """The released code's variants (docs/design.md, "Profiles")."""
    return Config(
        validation_min=100,
        validation_max=300,
        validation_floor=0.010,
        screening_keeps_quota=True,
        screen_top_up=False,
        screen_split_room=False,
        screen_solved_min=6,
        max_solved_uses=6,
        max_random_uses=3,
        screen_ready_share=0.7,
        exclude_by_form=True,
        past_revisions=True,
        ranking_smoke=RankingSmoke(),
        archive_cap=4,
        final_seats=2,
        reserve_rule=ReserveRule.FIXED,
        n_candidates_i1=2,
        early_stopping=EarlyStopping(unless_i2=True),
        max_epochs=4,
        strategy_floors=True,
        screen_smoke=ScreenSmoke(),
        screen_futility=True,
        probation=True,
        branch_saves=True,
        save_needs_wins=True,
        guard_severe_max=1,
        aux_guardrail=True,
        validation_futility=80,
        initial_in_pool=True,
        final_floor_samples=2.0,
        final_min_common=20,
        donor_salvage=True,
        warmup=Warmup(),
        residual_pooling=True,
        feedback_contrast=True,
        feedback_longitudinal=True,
        feedback_trajectories=True,
        feedback_gold_pairs=True,
        affordability_guards=True,
        i2_window=True,
        verified_fixes=True,
        keep_refinement_on_accept=True,
        i2_without_failures=True,
    )


PROFILES = {"paper": paper, "released": released}


def profile(name: str) -> Config:
    try:
        return PROFILES[name]()
    except KeyError:
        raise ConfigError(
            f"profile: unknown profile {name!r}; use one of {', '.join(PROFILES)}"
        ) from None
