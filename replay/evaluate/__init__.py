"""`stratune evaluate`: scoring skills on a split, and evaluation directories."""

__all__ = ["command", "directory", "flags", "scoring"]
