"""Iter-CoT's three turns to the target, in our own words: the zero-shot chain-of-thought
instruction added to the initial skill, the revise turn and the summary turn. The exemplar
block appended to the final skill.

The revise turn says what the released pipeline's says (GasolSun36/Iter-CoT, `code/utils.py`,
stage "bootstrapping"): the answer is not right, think more carefully and give the final answer;
from the second iteration on, that it is *still* not right. No gold answer and no hint of the
mistake is given, and nothing about the answer format is added."""

from __future__ import annotations

from collections.abc import Sequence

# The version of these prompts a run records ("3": the first; "4": the two-wording revise
# turn). Change it whenever their bytes change.
PROMPT_VERSION = "4"

COT_INSTRUCTION = (
    "Think step by step: write out your reasoning first, then give the final answer in the "
    "required format."
)

REVISE = "That answer is wrong. Think it over more carefully and give your final answer."
REVISE_AGAIN = (
    "That answer is still wrong. Think it over more carefully and give your final answer."
)


def revise_turn(iteration: int) -> str:
    """The revise turn of revision `iteration` (1-based)."""
    return REVISE if iteration == 1 else REVISE_AGAIN

SUMMARY = (
    "Now write one complete, self-contained reasoning process for this problem, from the start "
    "to the final answer, as if solving it for the first time (no mention of earlier attempts). "
    "End with the final answer in the required format."
)

EXEMPLARS_HEADER = "Worked examples (reasoning that reached the correct answer):"


def cot_skill(initial: str) -> str:
    return f"{initial}\n\n{COT_INSTRUCTION}"


def with_exemplars(initial: str, exemplars: Sequence[tuple[str, str]]) -> str:
    """The initial skill with (input, reasoning) exemplars appended."""
    if not exemplars:
        return initial
    blocks = "\n\n".join(f"Example {i}:\n{question}\n\nReasoning:\n{reasoning}"
                         for i, (question, reasoning) in enumerate(exemplars, start=1))
    return f"{initial}\n\n{EXEMPLARS_HEADER}\n\n{blocks}"
