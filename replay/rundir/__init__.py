"""Run directories on disk: the trace files, their converter, the seal, the lock."""

__all__ = ["lock", "output_path", "seal", "serde", "trace"]
