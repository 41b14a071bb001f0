"""The paper's baselines, one module each with its entry (`methods/entry.py`), each driving its own
steps over the shared task, model cache, budget ledger and trace format. StraTune's rounds and
the entry point for every method (`round/registry.iterate_method`) are in the layer above."""

__all__ = ["baselines", "entry", "event_view", "executions", "finish", "gepa_adapter",
           "gepa_events", "gepa_hybrid", "gepa_prompts", "gepa_run", "iter_cot", "iter_cot_events",
           "iter_cot_prompts", "iter_cot_turns", "opening", "proposal", "replies", "skillopt",
           "skillopt_edits", "skillopt_events", "skillopt_guidance", "skillopt_hybrid",
           "skillopt_prompts", "skillopt_step", "splits", "state", "textgrad", "textgrad_prompts",
           "textgrad_reply", "trace2skill", "trace2skill_events", "trace2skill_prompts",
           "trajectories"]
