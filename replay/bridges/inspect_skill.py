"""An Inspect task's `system_message` solvers as the skill, and the task with a skill in them.

The skill is the text of the task's `system_message` solvers: one solver's text is the skill
as it is, several are the parts `system-1`, `system-2`, ... of one skill. A task without one
gets its skill as a system message before its first solver. Each text is the solver's own
(its template read, its `params` filled in, as Inspect renders it); the fields it leaves for
a sample's metadata (`{topic}`) are placeholders every candidate keeps.

`with_skill(task, skill)` is the task with the skill in those places: what StraTune executes,
and what `stratune export-inspect` hands back to `inspect eval`.
"""

from __future__ import annotations

import string
from collections.abc import Sequence
from typing import Any

from attrs import field, frozen
from inspect_ai import Task, task_with
from inspect_ai._util.format import format_template
from inspect_ai._util.registry import registry_info
from inspect_ai.model import ChatMessageSystem, ModelName
from inspect_ai.solver import Generate, Solver, TaskState, chain, solver
from inspect_ai.solver._util import append_system_message

from replay.bridges.inspect_engine import run_sync
from stratune_core.records.errors import TaskDataError
from stratune_core.records.parts import Placeholders, SkillParts, render_parts

SYSTEM_MESSAGE = "inspect_ai/system_message"
DEFAULT_SKILL = "Complete the task in the user's message."


@solver(name="stratune_skill")
def skill_message(text: str) -> Solver:
    """Inspect's `system_message`, for a skill's text: filled in from the sample's metadata
    and store as Inspect fills a template, and never read as a file or URL (a skill is text)."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        kwargs = state.metadata | state.store._data
        append_system_message(state.messages,
                              ChatMessageSystem(content=format_template(text, kwargs)))
        return state

    return solve


def listed(found: Solver | Sequence[Solver] | None) -> list[Solver]:
    """A chain's solvers in order, or the one, or none."""
    if found is None:
        return []
    return list(found) if isinstance(found, Sequence) else [found]


def solvers_of(task: Task) -> list[Solver]:
    return listed(task.solver)


def _name(item: Solver) -> str | None:
    try:
        return str(registry_info(item).name)
    except ValueError:  # an unregistered callable
        return None


def _rendered(item: Solver) -> str:
    """A system_message solver's text as it renders with no metadata: the template read and
    its params filled in, the sample's fields left as written."""

    async def render() -> str:
        state = TaskState(model=ModelName("none/none"), sample_id=0, epoch=1, input="",
                          messages=[])

        async def no_generate(state: TaskState, *args: Any, **kwargs: Any) -> TaskState:
            return state

        await item(state, no_generate)
        return state.messages[0].text

    return run_sync(render)


def _fields(text: str) -> tuple[str, ...]:
    """The `{field}` placeholders of a template, as written (`{{` and `}}` are braces)."""
    try:
        parsed = list(string.Formatter().parse(text))
    except ValueError:  # unbalanced braces: Inspect keeps such a text as it is
        return ()
    found = ["{" + name + (f"!{conversion}" if conversion else "") +
             (f":{spec}" if spec else "") + "}"
             for _, name, spec, conversion in parsed if name]
    return tuple(dict.fromkeys(found))


@frozen(kw_only=True)
class SkillLayout:
    """Where the skill goes among a task's solvers: the positions of its system_message
    solvers (none: a system message before the first solver) and their texts."""

    positions: tuple[int, ...] = field(converter=tuple)
    texts: tuple[str, ...] = field(converter=tuple)

    @classmethod
    def of(cls, task: Task) -> SkillLayout:
        solvers = solvers_of(task)
        positions = [i for i, s in enumerate(solvers) if _name(s) == SYSTEM_MESSAGE]
        return cls(positions=positions, texts=[_rendered(solvers[i]) for i in positions])

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(f"system-{i}" for i in range(1, len(self.texts) + 1))

    def initial_skill(self) -> str:
        if len(self.texts) > 1:
            try:
                return render_parts(dict(zip(self.names, self.texts, strict=True)))
            except ValueError as exc:
                raise TaskDataError(f"system_message solvers: {exc}") from None
        return self.texts[0] if self.texts else DEFAULT_SKILL

    def placeholders(self) -> Placeholders:
        if len(self.texts) > 1:
            return tuple((n, _fields(t)) for n, t in zip(self.names, self.texts, strict=True)
                         if _fields(t))
        return (("", _fields(self.texts[0])),) if self.texts and _fields(self.texts[0]) else ()

    def solvers(self, solvers: Sequence[Solver], skill: str) -> list[Solver]:
        """`solvers` with the skill's texts in the system_message solvers' places."""
        if not self.positions:
            return [skill_message(skill), *solvers]
        texts = SkillParts.read(skill).texts if len(self.positions) > 1 else (skill,)
        out = list(solvers)
        for position, text in zip(self.positions, texts, strict=True):
            out[position] = skill_message(text)
        return out


def with_skill(task: Task, skill: str) -> Task:
    """`task` with `skill` as its system message(s): the learned skill as an Inspect task,
    for `inspect eval` (its dataset, scorers and other solvers unchanged)."""
    layout = SkillLayout.of(task)
    return task_with(task, solver=chain(*layout.solvers(solvers_of(task), skill)))
