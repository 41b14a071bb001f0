"""What GEPA's reflection sees of our runs. The reflection prompt itself is GEPA's default
template (the package's own behaviour); what we write is the system line of the call and the
records of its reflective dataset: one per minibatch execution, with the input, the target's
output and feedback built from the expected answer and the scorer's verdict."""

from __future__ import annotations

from stratune_core.records.base import Execution
from stratune_core.state.context import Env

# The version of these prompts a run records ("3": the first recorded). Change it whenever
# their bytes change.
PROMPT_VERSION = "3"

COMPONENT = "skill"  # the single editable component: the skill, sent as the system prompt

REFLECTION_SYSTEM = ("You improve the instructions an assistant follows. Answer as asked, with "
                     "the new instructions in one fenced block.")


def record(env: Env, execution: Execution) -> dict[str, str]:
    """One execution as GEPA's reflective dataset wants it (keys become its headings)."""
    sample = env.samples[execution.sample_id]
    verdict = "solved" if execution.solved else f"not solved: {execution.summary or 'wrong'}"
    return {
        "Inputs": env.task.describe(sample),
        "Generated Outputs": execution.output,
        "Feedback": (f"Expected answer: {env.task.expected(sample)}. "
                     f"Score {execution.score:.2f}, {verdict}."),
    }
