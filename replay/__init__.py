"""The shell: runner, run directories and traces, replay, the viewer and the CLI."""
