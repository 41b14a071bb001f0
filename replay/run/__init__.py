"""One training run: options into a Config, the runner, its live display, replay's checks."""

__all__ = ["file_checks", "hooks", "method_options", "options", "package_drift", "progress", "provenance", "runner", "verify"]
