"""The bundled demo task data and its generator (see README.md)."""

__all__ = ["generate"]
