"""The shell: runner, run directories and traces, replay, the viewer and the CLI."""

__all__ = ["api", "bridges", "cli", "commands", "compare", "dashboard", "data", "docs_tables",
           "dspy_program", "evaluate", "grid", "harness", "input_files", "models", "plan", "run",
           "rundir", "skills", "stops", "targets", "tasks", "tracking", "viewer"]
