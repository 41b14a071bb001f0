"""Target kinds: how one target execution runs (one model call, an agent episode with tools,
an episode of a harness), each one entry of `kinds.TARGET_KINDS`."""

__all__ = ["kinds"]
