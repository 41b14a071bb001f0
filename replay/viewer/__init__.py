"""The trace viewer: pure functions from events (+ manifest, usage, evaluation) to rich
renderables. Nothing here prints or creates a Console; the CLI does."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich.console import Group, RenderableType
from rich.rule import Rule
from rich.text import Text

from replay.rundir.serde import Manifest
from replay.viewer import (
    method_lines,  # noqa: F401  (registers the baselines' event lines)
    released_lines,  # noqa: F401  (and the released mechanisms')
)
from replay.viewer.charts import strip_by_round, trajectory
from replay.viewer.costs import cost_table
from replay.viewer.detail import candidate_detail, round_detail
from replay.viewer.events_log import event_line
from replay.viewer.model import RunView, build_view
from replay.viewer.rounds import round_table
from replay.viewer.tables import header

__all__ = ["RunView", "build_view", "candidate_detail", "event_line", "round_detail", "summary"]


def summary(view: RunView, manifest: Manifest | None = None,
            usage: Mapping[str, Any] | None = None,
            evaluation: Mapping[str, Any] | None = None) -> RenderableType:
    """Header, round table, trajectory and operator strip, token/cost table."""
    return Group(
        Rule(Text("StraTune run", style="bold")),
        header(view, manifest, evaluation, usage),
        Text(""),
        round_table(view),
        Text(""),
        trajectory(view),
        strip_by_round(view),
        Text(""),
        cost_table(usage),
    )
