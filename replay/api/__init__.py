"""The Python API behind `import stratune` (which only re-exports it)."""

__all__ = ["arguments", "checks", "data_task", "output", "results", "runs", "training"]
