"""TextGrad's optimizer calls, in our own words. Per execution, two gradient calls, as
TextGrad's backward pass makes them in its released prompt-optimization example: one through
the evaluation (feedback on the model's output, from the expected answer and the scorer's
verdict) and one through the model call (feedback on the skill, its system prompt, from that
call and the output's feedback). Then the update that applies the minibatch's feedback on the
skill. The update carries no constraint, as the example's optimizer is built without one."""

from __future__ import annotations

from collections.abc import Sequence

# The version of these prompts a run records ("3": the first; "4": two gradient calls per
# sample and an unconstrained update). Change it whenever their bytes change.
PROMPT_VERSION = "4"

OUTPUT_SYSTEM = (
    "You are the critic in a prompt optimization system. You are shown one output of a language "
    "model and how an evaluation judged it. Explain precisely what is wrong or missing in the "
    "output and how it should change to be judged better. Criticise the output only."
)

GRADIENT_SYSTEM = (
    "You are the critic in a prompt optimization system. A language model follows the skill "
    "(its system prompt) to solve tasks. Given one of its calls and feedback on the call's "
    "output, explain precisely how the skill should change so that the model does better on "
    "tasks like this one. Criticise the skill, not the model. Do not rewrite the skill."
)

UPDATE_SYSTEM = (
    "You are the optimizer in a prompt optimization system. You improve a skill (a system "
    "prompt) by applying feedback gathered from executions, like a gradient step."
)

SKILL_TAG = "improved_skill"


def output_prompt(evaluated: str) -> str:
    """The gradient through the evaluation: `evaluated` is the input, the output, the expected
    answer and the scorer's verdict."""
    return (f"An output of the model and its evaluation:\n{evaluated}\n\n"
            "Give concise feedback on the output: what made the evaluation judge it this way, "
            "and what about the output should change.")


def gradient_prompt(skill: str, call: str, output_feedback: str) -> str:
    """The gradient through the model call: the skill, the call (input and output, no
    expected answer) and the feedback the output received."""
    return (f"The skill:\n<skill>\n{skill}\n</skill>\n\n"
            f"One call of the model under this skill:\n{call}\n\n"
            f"Feedback on this output:\n<output_feedback>\n{output_feedback}\n</output_feedback>"
            "\n\nGive concise feedback on the skill: what in it led to this output, and what "
            "change would improve outputs on similar tasks while keeping what already works.")


def update_prompt(skill: str, feedback: Sequence[str]) -> str:
    items = "\n\n".join(f"<feedback>\n{f}\n</feedback>" for f in feedback)
    return (f"The current skill:\n<skill>\n{skill}\n</skill>\n\n"
            f"Feedback from a minibatch of executions:\n{items}\n\n"
            "Write an improved skill that addresses the feedback. Reply with the complete new "
            f"skill between <{SKILL_TAG}> and </{SKILL_TAG}>.")
