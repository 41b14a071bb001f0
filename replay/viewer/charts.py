"""The paper's Fig. 3 in text: the current skill's score against executions spent, with the
operator of each round drawn as a strip on the same axis."""

from __future__ import annotations

from attrs import frozen
from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.text import Text

from replay.viewer.model import RunView
from replay.viewer.style import STRATEGY_STYLE

HEIGHT = 9  # odd, so the middle row is 0.50
WIDTH = 64
MIN_WIDTH = 20
LABEL = 6  # the score labels left of the plot ("0.50 │")


def _column(spent: int, limit: int, width: int) -> int:
    return min(width - 1, round(spent / max(1, limit) * (width - 1)))


@frozen
class _Trajectory:
    """The chart drawn when printed, at most `width` cells wide and narrower when the console
    is (a 60-column pipe), so that no line wraps and the axis labels stay whole."""

    view: RunView
    width: int | None
    height: int

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        room = max(MIN_WIDTH, options.max_width - LABEL)
        yield _draw(self.view, min(self.width or WIDTH, room), self.height)


def trajectory(view: RunView, width: int | None = None, height: int = HEIGHT) -> RenderableType:
    return _Trajectory(view, width, height)


def _draw(view: RunView, width: int, height: int) -> RenderableType:
    limit = view.started.budget if view.started else max((r.spent_end for r in view.rounds),
                                                         default=1)
    points = [(r, r.batch.mean_score) for r in view.rounds
              if r.batch is not None and r.batch.skill_id == r.current_id]
    if not points:
        return Text("no rounds executed yet", style="dim")
    grid: list[list[Text | None]] = [[None] * width for _ in range(height)]
    for r, score in points:
        row = height - 1 - min(height - 1, int(score * (height - 1) + 0.5))
        style = STRATEGY_STYLE[r.operator.strategy] if r.operator else "white"
        mark = "▲" if r.accepted else "●"
        grid[row][_column(r.spent_start, limit, width)] = Text(mark, style=style)
    lines = [Text("score of the current skill on each round's batch (▲: accepted a candidate)",
                  style="bold")]
    for i, row in enumerate(grid):
        value = 1 - i / (height - 1)
        label = f"{value:4.2f} │" if i in (0, height // 2, height - 1) else "     │"
        line = Text(label, style="dim")
        for cell in row:
            line.append_text(cell if cell is not None else Text(" "))
        lines.append(line)
    lines.append(Text("     └" + "─" * width, style="dim"))
    lines.append(operator_strip(view, limit, width))
    axis = Text(f"      0{'executions'.center(width - len(str(limit)) - 1)}{limit}", style="dim")
    lines.append(axis)
    lines.append(legend())
    return Group(*lines)


def operator_strip(view: RunView, limit: int, width: int = WIDTH) -> Text:
    """One digit per round at its spending position: 1/2/3 for I1/I2/I3, · for a skipped round."""
    cells: list[Text] = [Text(" ")] * width
    for r in view.rounds:
        col = _column(r.spent_start, limit, width)
        if r.operator is None:
            cells[col] = Text("·", style="dim")
        else:
            digit = r.operator.strategy.value[1]
            cells[col] = Text(digit, style=f"bold {STRATEGY_STYLE[r.operator.strategy]}"
                              if r.accepted else STRATEGY_STYLE[r.operator.strategy])
    line = Text("  op  ", style="dim")
    for cell in cells:
        line.append_text(cell)
    return line


def legend() -> Text:
    line = Text("      ")
    for strategy, style in STRATEGY_STYLE.items():
        line.append(f"{strategy.value[1]}", style=style)
        line.append(f" {strategy.value}  ")
    return line


def strip_by_round(view: RunView) -> Text:
    """The operator per round, one label per round, in order (compact, no axis)."""
    line = Text("operators: ", style="bold")
    for i, r in enumerate(view.rounds):
        if i:
            line.append(" ")
        if r.operator is None:
            line.append("·", style="dim")
            continue
        label = r.operator.strategy.value + (f"{r.operator.form.value}" if r.operator.form else "")
        style = STRATEGY_STYLE[r.operator.strategy]
        line.append(label + ("✓" if r.accepted else ""), style=f"bold {style}" if r.accepted
                    else style)
    return line
