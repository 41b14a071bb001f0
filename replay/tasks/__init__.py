"""Task loaders (disk, sandbox) for the benchmarks, custom JSONL tasks and the demo."""

from replay.tasks.registry import load_task

__all__ = ["load_task"]
