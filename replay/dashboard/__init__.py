"""The web dashboard: `stratune view DIR --html FILE` writes one self-contained page of a run
or a grid, `stratune serve DIR` serves the same page live while it is written. Built from the
typed records the terminal viewer and `compare` read (docs/dashboard.md)."""

__all__ = ["diffs", "executions", "grid_data", "html_file", "live_source", "page", "rounds_data",
           "run_data", "screenshots", "server", "skill_data", "source"]
