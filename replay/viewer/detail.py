"""Round detail (`--round N`) and candidate detail (`--candidate ID`): selection reasoning,
stage checks, and coloured diffs of each candidate against its parent."""

from __future__ import annotations

import difflib

from rich.console import Group, RenderableType, group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from replay.viewer.events_log import event_line, outcome_summary
from replay.viewer.model import CandidateView, RoundView, RunView
from replay.viewer.released_lines import rule_line
from replay.viewer.style import operator_label, short_id, verdict_text
from stratune_core.evaluation import Outcome
from stratune_core.records.parts import SkillParts
from stratune_core.released.events import RuleChecked


def skill_diff(old: str, new: str, context: int = 2) -> Text:
    """Unified diff of two skill texts, additions green, deletions red."""
    out = Text()
    lines = list(difflib.unified_diff(old.splitlines(), new.splitlines(), "parent", "candidate",
                                      n=context, lineterm=""))
    if not lines:
        return Text("(identical)", style="dim")
    for line in lines[2:]:  # the ---/+++ file header says nothing here
        style = ("green" if line.startswith("+") else "red" if line.startswith("-")
                 else "cyan" if line.startswith("@@") else "")
        out.append(line + "\n", style=style)
    out.rstrip()
    return out


def checks_table(outcome: Outcome) -> Group:
    table = Table(show_edge=False, pad_edge=False, header_style="bold", box=None)
    for name in ("check", "value", "limit", "result"):
        table.add_column(name, justify="left" if name in ("check", "result") else "right")
    for c in outcome.checks:
        table.add_row(c.name, f"{c.value:.3f}", f"{c.limit:.3f}",
                      Text("pass", style="green") if c.passed else Text("FAIL", style="red"))
    if not outcome.checks:
        table.add_row("—", "", "", ", ".join(r.value for r in outcome.failed))
    verdict = Text("passed", style="green") if outcome.passed else Text("failed", style="red")
    head = Text(f"{outcome.stage.value} ", style="bold").append_text(verdict)
    head.append(f": {outcome_summary(outcome)}")
    return Group(head, table)


@group()
def candidate_detail(view: RunView, c: CandidateView, *, full_text: bool = False):
    title = Text(f"candidate {short_id(c.candidate_id)} · round {c.round + 1} · ")
    title.append_text(operator_label(c.strategy, c.form)).append(" · ")
    title.append_text(verdict_text(c.verdict))
    yield title
    if c.theme:
        yield Text(f"theme: {c.theme}")
    if c.sources:
        yield Text(f"grounded in samples: {', '.join(c.sources)}", style="dim")
    if c.reasons:
        yield Text(f"reasons: {', '.join(r.value for r in c.reasons)}", style="dim")
    if c.ranking_score is not None:
        yield Text(f"ranking-subset score: {c.ranking_score:.3f}")
    for outcome in (c.screening, c.validation):
        if outcome is not None:
            yield checks_table(outcome)
    # the released rules consulted for its screening call, each failed condition named
    r = view.round(c.round + 1)
    for e in r.events if r is not None else ():
        if isinstance(e, RuleChecked) and e.candidate_id == c.candidate_id:
            yield Text(rule_line(e), style="green" if e.holds else "yellow")
    parent = view.skills.get(c.parent_id)
    new = view.skills.get(c.candidate_id)
    if parent is not None and new is not None:
        yield from diff_panels(parent, new, f"diff against parent {short_id(c.parent_id)}")
    if full_text and new is not None:
        yield from text_panels(new, "candidate text")


def _by_part(text: str) -> list[tuple[str, str]]:
    """A skill's parts as (title prefix, text); a one-part skill is one untitled part."""
    parts = SkillParts.read(text)
    if not parts.names:
        return [("", text)]
    return [(f"part {name} · ", part) for name, part in zip(parts.names, parts.texts, strict=True)]


def diff_panels(old: str, new: str, title: str) -> list[Panel]:
    """The diff of a candidate against its parent, one panel per part of a multi-part skill (the
    parts the candidate left as they were are named in one line)."""
    old_parts = dict(_by_part(old))
    panels, same = [], []
    for prefix, text in _by_part(new):
        before = old_parts.get(prefix, "")
        if prefix and before == text:
            same.append(prefix.removeprefix("part ").removesuffix(" · "))
            continue
        panels.append(Panel(skill_diff(before, text), title=f"{prefix}{title}", title_align="left"))
    if same:
        panels.append(Panel(Text(f"unchanged: {', '.join(same)}", style="dim"), title=title,
                            title_align="left"))
    return panels


def text_panels(text: str, title: str) -> list[Panel]:
    return [Panel(Text(part), title=f"{prefix}{title}", title_align="left")
            for prefix, part in _by_part(text)]


def round_detail(view: RunView, r: RoundView) -> RenderableType:
    parts: list[RenderableType] = []
    head = Text(f"round {r.index + 1} · epoch {r.epoch + 1} · batch {r.batch_index} · current "
                f"{short_id(r.current_id)} · spent {r.spent_start} → {r.spent_end}", style="bold")
    parts.append(head)
    if r.operator is not None:
        op = Text("operator ").append_text(operator_label(r.operator.strategy, r.operator.form))
        op.append(f" chosen by {r.operator.source}")
        parts.append(op)
        parts.append(Panel(Text(r.operator.why or "(no reason given)"),
                           title="selection reasoning", title_align="left"))
        if r.operator.fallback:
            parts.append(Text(f"fallback: {r.operator.detail}", style="yellow"))
    for reason in r.skipped:
        parts.append(Text(f"skipped: {reason}", style="yellow"))
    for c in r.candidates:
        parts.append(candidate_detail(view, c))
    for inv in r.invalid:
        parts.append(event_line(inv))
    log = Text("\n").join(event_line(e) for e in r.events)
    parts.append(Panel(log, title="events", title_align="left"))
    return Group(*parts)
