"""The aggregates, a layer above the parts they assemble: the state Omega_t (`state.py`), the
history H_t, the `Event` union, the round's trail and what a round needs (`context.Env`).
"""

__all__ = ["candidate_events", "context", "events", "history", "state", "trail"]
