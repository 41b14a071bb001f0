"""One execution rendered for a baseline's optimizer prompt: the input, the target's output,
the expected answer and the scorer's verdict (`render`), or the call alone, without the
evaluation (`render_call`, for a gradient through the model call alone). Short by the task's
contract (`Task.describe`)."""

from __future__ import annotations

from stratune_core.records.base import Execution
from stratune_core.state.context import Env


def render_call(env: Env, execution: Execution) -> str:
    sample = env.samples[execution.sample_id]
    return (f"<input>\n{env.task.describe(sample)}\n</input>\n"
            f"<output>\n{execution.output}\n</output>")


def render(env: Env, execution: Execution) -> str:
    sample = env.samples[execution.sample_id]
    verdict = "solved" if execution.solved else f"not solved: {execution.summary or 'wrong'}"
    return (f"{render_call(env, execution)}\n"
            f"<expected>\n{env.task.expected(sample)}\n</expected>\n"
            f"<result>score {execution.score:.2f}, {verdict}</result>")
