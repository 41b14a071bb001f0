"""SkillOpt's optimizer calls, in our own words: analysts of failure and success minibatches
proposing scored edits, the merges of similar proposals (failures' and successes' apart, then a
final merge that puts the failures' first), the slow update's guidance from a longitudinal
comparison (written into the skill's protected section), and the meta guidance carried from
epoch to epoch to the analysts and the merges.

An edit proposal is `<proposal score="0.0-1.0">` around one `<edit>` element in the patch
format of `stratune_core/operators/patches.py` (append, replace, insert_after)."""

from __future__ import annotations

from collections.abc import Sequence

# The version of these prompts a run records ("3": the first; "4": separate failure and
# success merges, protected epoch guidance, unconditional slow update).
PROMPT_VERSION = "4"

PROPOSAL_TAG = "proposal"
GUIDANCE_TAG = "guidance"  # the meta guidance's reply
SLOW_TAG = "epoch_guidance"  # the slow update's reply, the same name as the skill's section

EDIT_FORMAT = (
    'Write each edit as <proposal score="S"> ... </proposal>, where S in [0, 1] is how much '
    "the edit matters, around exactly one edit element:\n"
    '<edit op="append"><new>text added at the end</new></edit>\n'
    '<edit op="replace"><old>exact text of the skill</old><new>its replacement</new></edit>\n'
    '<edit op="insert_after"><anchor>exact text of the skill</anchor><new>new line(s)</new>'
    "</edit>"
)

ANALYST_SYSTEM = (
    "You analyse a minibatch of executions of a language model that follows a skill document "
    "(its system prompt) and propose small, general edits to the skill document."
)

MERGE_SYSTEM = (
    "You merge edit proposals for a skill document: combine proposals that make the same "
    "change, drop contradictory or task-specific ones, and keep the scores meaningful."
)

FINAL_MERGE_SYSTEM = (
    "You combine two merged lists of edit proposals for a skill document, one drawn from failed "
    "executions and one from successful ones, into a single list. Where they conflict or "
    "overlap, the failure-driven proposals come first."
)

SLOW_SYSTEM = (
    "You review a skill document across a training epoch: the previous epoch's skill and the "
    "current one were run on the same tasks. You write short guidance for the skill that keeps "
    "what improved and repairs what regressed; it replaces the skill's epoch guidance section."
)

META_SYSTEM = (
    "You keep a short strategy memory for improving a skill document: which kinds of edits "
    "helped and which did not, across training epochs."
)


def _guidance(meta: str) -> str:
    return f"\n\nStrategy memory from earlier epochs:\n<{GUIDANCE_TAG}>\n{meta}\n</{GUIDANCE_TAG}>" \
        if meta else ""


def analyst_prompt(skill: str, trajectories: Sequence[str], failures: bool, meta: str) -> str:
    kind = ("failed" if failures else "succeeded")
    focus = ("Find the causes the failures share and propose edits that fix them."
             if failures else "Find what the successes relied on that the skill does not yet "
             "say, and propose edits that make it explicit.")
    items = "\n\n".join(f"<execution>\n{t}\n</execution>" for t in trajectories)
    return (f"The skill document:\n<skill>\n{skill}\n</skill>{_guidance(meta)}\n\n"
            f"Executions that {kind}:\n{items}\n\n{focus} Propose at most 3 edits; keep the "
            f"task statement and the required response format.\n\n{EDIT_FORMAT}")


def merge_prompt(skill: str, proposals: Sequence[str], failures: bool, meta: str) -> str:
    source = "failed" if failures else "successful"
    items = "\n\n".join(proposals)
    return (f"The skill document:\n<skill>\n{skill}\n</skill>{_guidance(meta)}\n\n"
            f"Edit proposals drawn from {source} executions:\n{items}\n\n"
            f"Merge them into a shorter list of distinct proposals.\n\n{EDIT_FORMAT}")


def final_merge_prompt(skill: str, failures: Sequence[str], successes: Sequence[str],
                       meta: str) -> str:
    first, second = "\n\n".join(failures), "\n\n".join(successes)
    return (f"The skill document:\n<skill>\n{skill}\n</skill>{_guidance(meta)}\n\n"
            f"Proposals from failed executions (first priority):\n{first}\n\n"
            f"Proposals from successful executions (second priority):\n{second}\n\n"
            f"Combine them into one list.\n\n{EDIT_FORMAT}")


def slow_prompt(previous: str, current: str, comparison: str, guidance: str) -> str:
    earlier = guidance or "(none yet: this is the first slow update)"
    return (f"The previous epoch's skill:\n<previous>\n{previous}\n</previous>\n\n"
            f"The current skill:\n<skill>\n{current}\n</skill>\n\n"
            f"The epoch guidance the current epoch ran with (judge whether it helped):\n"
            f"{earlier}\n\nThe two skills on the same tasks:\n{comparison}\n\n"
            f"Write the new epoch guidance: a few short lines on what to keep doing and what "
            f"to repair. Reply between <{SLOW_TAG}> and </{SLOW_TAG}>.")


def meta_prompt(previous_memory: str, comparison: str, accepted: int, rejected: int) -> str:
    memory = previous_memory or "(empty)"
    return (f"The strategy memory so far:\n{memory}\n\nThis epoch: {accepted} updates accepted, "
            f"{rejected} rejected by validation. The previous and current epoch's skills on "
            f"the same tasks:\n{comparison}\n\nRewrite the memory in at most 8 short lines: "
            f"what to do more of, what to avoid. Reply between <{GUIDANCE_TAG}> and "
            f"</{GUIDANCE_TAG}>.")
