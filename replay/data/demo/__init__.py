"""The bundled demo task data and its generator (see README.md)."""
