"""StraTune: learn a skill (a prompt) from execution feedback.

    import stratune
    result = stratune.optimize("orders.jsonl", target="anthropic:claude-haiku-4-5",
                               optimizer="anthropic:claude-sonnet-4-6", budget="6x",
                               out="runs/orders")
    print(result.final_skill, result.cost.usd, result.trace)

This module only re-exports: the code lives in `stratune_core` (the method), `llm_cache` (model
calls) and `replay` (runs, traces and the command line). See docs/python-api.md.
"""

from __future__ import annotations

from replay.api.checks import evaluate, plan, replay
from replay.api.data_task import DataTask
from replay.api.results import (
    ModelCallFailed,
    OptimizeResult,
    ReplayFailed,
    ReplayResult,
    RunStopped,
    Update,
)
from replay.api.runs import Candidate, Cost, Round, Run, load_run
from replay.api.training import iterate, optimize
from replay.evaluate.directory import EvaluationRecord
from replay.plan.estimate import Plan
from replay.rundir.serde import TraceError
from replay.skills.agent_skill import AgentSkill, SkillFolderError, read_skill_folder
from replay.tools.declared import tool
from stratune_core.records.errors import ConfigError, StraTuneError, TaskDataError

data_task = DataTask.build

__all__ = [
    "AgentSkill",
    "Candidate",
    "ConfigError",
    "Cost",
    "DataTask",
    "EvaluationRecord",
    "ModelCallFailed",
    "OptimizeResult",
    "Plan",
    "ReplayFailed",
    "ReplayResult",
    "Round",
    "Run",
    "RunStopped",
    "SkillFolderError",
    "StraTuneError",
    "TaskDataError",
    "TraceError",
    "Update",
    "data_task",
    "evaluate",
    "iterate",
    "load_run",
    "optimize",
    "plan",
    "read_skill_folder",
    "replay",
    "tool",
]
