"""TextGrad's two optimizer calls, in our own words: a textual gradient (feedback on the skill
from one execution) and the update that applies the minibatch's gradients."""

from __future__ import annotations

from collections.abc import Sequence

GRADIENT_SYSTEM = (
    "You are the critic in a prompt optimization system. A language model follows the skill "
    "(its system prompt) to solve tasks. Given one execution, explain precisely how the skill "
    "should change so that the model does better on tasks like this one. Criticise the skill, "
    "not the model. Do not rewrite the skill."
)

UPDATE_SYSTEM = (
    "You are the optimizer in a prompt optimization system. You improve a skill (a system "
    "prompt) by applying feedback gathered from executions, like a gradient step."
)

SKILL_TAG = "improved_skill"


def gradient_prompt(skill: str, trajectory: str) -> str:
    return (f"The skill:\n<skill>\n{skill}\n</skill>\n\n"
            f"One execution of the model under this skill:\n{trajectory}\n\n"
            "Give concise feedback: what in the skill led to this result, and what change "
            "would improve the result on similar tasks while keeping what already works.")


def update_prompt(skill: str, feedback: Sequence[str]) -> str:
    items = "\n\n".join(f"<feedback>\n{f}\n</feedback>" for f in feedback)
    return (f"The current skill:\n<skill>\n{skill}\n</skill>\n\n"
            f"Feedback from a minibatch of executions:\n{items}\n\n"
            "Write an improved skill that addresses the feedback. Keep the required response "
            "format of the current skill exactly. Reply with the complete new skill between "
            f"<{SKILL_TAG}> and </{SKILL_TAG}>.")
