"""The parts run on the state: one round (`step`), the driver loop (`run`), target executions,
operator choice, feedback preparation, the strategies, candidate evaluation, the released
mechanisms, final selection, and `registry.iterate_method`, the entry point for every method.
"""

__all__ = ["affordability", "candidate_eval", "candidates", "draft_ranking", "execute", "extras",
           "final", "generation", "hybrid", "i2_window", "i3_submission", "operator_choice",
           "pool", "prep", "ranking_smoke", "readiness", "registry", "reserve", "residuals", "run",
           "salvage", "salvage_prompt", "screening_run", "stages", "step", "strategies",
           "verified_fixes", "warmup"]
