"""The target-kind axis: how one execution of the target runs. Each kind is one entry every
reader consults: task loading (the kind wraps the task, and `plan` reads the wrapped task's turns), the
backends a run needs beside the target's and the optimizer's, and the docs' table.

- `call`: one model call per execution (or the task's own fixed calls), the paper's setting;
- `agent`: an episode of model calls and tool calls (`--tools`), `stratune_core/tasks/agent.py`.

A new kind is an entry here (and its module): `kind_of` picks the first whose `applies` holds.
"""

from __future__ import annotations

import enum
import functools
from collections.abc import Callable, Mapping

from attrs import frozen

from llm_cache.backends.base import Backend
from llm_cache.records import Role
from replay.models.extensions import ModelKind
from replay.rundir.serde import TaskSpec
from replay.tools.backend import CALL_SECONDS, EPISODE_SECONDS
from replay.tools.toolset import Toolset, check_turns, load_toolset
from stratune_core.records.task import Task
from stratune_core.tasks.agent import AgentTask, Toolbox


class TargetKind(enum.StrEnum):
    CALL = "call"
    AGENT = "agent"
    CLAUDE_CODE = "claude-code"


@frozen(kw_only=True)
class TargetKindEntry:
    kind: TargetKind
    label: str
    description: str
    applies: Callable[[TaskSpec, str], bool]  # (task spec, target model spec)
    wrap: Callable[[Task, TaskSpec, Toolbox | None], Task]  # the recorded toolbox on replay
    backends: Callable[[TaskSpec], Mapping[Role, Backend]]
    # the target spec prefix the kind answers (`claude-code:`), with its model kind
    prefix: str = ""
    model_kind: Callable[[], ModelKind] | None = None


@functools.cache
def toolset(tools: tuple[str, ...], max_turns: int | None) -> Toolset:
    """The task's tools, loaded once per process."""
    return load_toolset(tools, max_turns, call_seconds=CALL_SECONDS)


def _agent_task(task: Task, spec: TaskSpec, recorded: Toolbox | None) -> Task:
    box = recorded if recorded is not None else toolset(spec.tools, spec.max_turns).toolbox()
    return AgentTask(base=task, toolbox=box)


def _harness_task(task: Task, spec: TaskSpec, recorded: Toolbox | None) -> Task:
    from replay.harness.task import HarnessTask

    return HarnessTask.of(task, skill_dir=spec.skill, tools=spec.tools,
                          max_turns=check_turns(spec.max_turns))


def _claude_code_kind() -> ModelKind:
    from replay.harness.spec import KIND

    return KIND


TARGET_KINDS: tuple[TargetKindEntry, ...] = (
    TargetKindEntry(
        kind=TargetKind.CLAUDE_CODE, label="Claude Code episode",
        description="an episode of the real Claude Code CLI with the skill folder installed; "
                    "its API calls through a local proxy and the cache; one execution",
        applies=lambda spec, target: spec.kind == TargetKind.CLAUDE_CODE.value,
        wrap=_harness_task, backends=lambda spec: {}, prefix="claude-code",
        model_kind=_claude_code_kind,
    ),
    TargetKindEntry(
        kind=TargetKind.AGENT, label="agent episode",
        description="model calls and tool calls until an answer or --max-turns; one "
                    "execution of the budget; every call cached, every tool result recorded",
        applies=lambda spec, target: bool(spec.tools) and spec.kind is None,
        wrap=_agent_task,
        backends=lambda spec: {Role.TOOL: toolset(spec.tools, spec.max_turns).backend(
            call_seconds=CALL_SECONDS, episode_seconds=EPISODE_SECONDS)},
    ),
    TargetKindEntry(
        kind=TargetKind.CALL, label="one call",
        description="one model call per execution (a task of several steps: its own calls)",
        applies=lambda spec, target: True,
        wrap=lambda task, spec, recorded: task,
        backends=lambda spec: {},
    ),
)


def toolbox_of(spec: TaskSpec) -> Toolbox | None:
    """What the manifest records of an agent task's tools (None: a task without tools)."""
    if kind_of(spec).kind is not TargetKind.AGENT:
        return None
    return toolset(spec.tools, spec.max_turns).toolbox()


def model_kinds() -> dict[str, ModelKind]:
    """The built-in model kinds of the target kinds (`claude-code:`), by spec prefix."""
    return {k.prefix: k.model_kind() for k in TARGET_KINDS if k.model_kind is not None}


def kind_for_target(target: str) -> str | None:
    """The task spec's `kind` for a target spec (None: a model's own call)."""
    prefix = target.partition(":")[0]
    found = next((k for k in TARGET_KINDS if k.prefix and k.prefix == prefix), None)
    return None if found is None else found.kind.value


def kind_of(spec: TaskSpec, target: str = "") -> TargetKindEntry:
    return next(k for k in TARGET_KINDS if k.applies(spec, target))
