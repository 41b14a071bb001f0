"""SkillOpt's optimizer calls, in our own words: analysts of failure and success minibatches
proposing scored edits, the merge of similar proposals, the slow update's guidance from a
longitudinal comparison, and the meta guidance carried from epoch to epoch.

An edit proposal is `<proposal score="0.0-1.0">` around one `<edit>` element in the patch
format of `stratune_core/operators/patches.py` (append, replace, insert_after)."""

from __future__ import annotations

from collections.abc import Sequence

PROPOSAL_TAG = "proposal"
GUIDANCE_TAG = "guidance"

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

SLOW_SYSTEM = (
    "You review a skill document across a training epoch: the previous epoch's skill and the "
    "current one were run on the same tasks. You propose edits that keep what improved and "
    "repair what regressed."
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


def merge_prompt(skill: str, proposals: Sequence[str]) -> str:
    items = "\n\n".join(proposals)
    return (f"The skill document:\n<skill>\n{skill}\n</skill>\n\nEdit proposals:\n{items}\n\n"
            f"Merge them into a shorter list of distinct proposals.\n\n{EDIT_FORMAT}")


def slow_prompt(previous: str, current: str, comparison: str, meta: str) -> str:
    return (f"The previous epoch's skill:\n<previous>\n{previous}\n</previous>\n\n"
            f"The current skill:\n<skill>\n{current}\n</skill>{_guidance(meta)}\n\n"
            f"The two on the same tasks:\n{comparison}\n\nPropose at most 3 edits to the "
            f"current skill.\n\n{EDIT_FORMAT}")


def meta_prompt(previous_memory: str, comparison: str, accepted: int, rejected: int) -> str:
    memory = previous_memory or "(empty)"
    return (f"The strategy memory so far:\n{memory}\n\nThis epoch: {accepted} updates accepted, "
            f"{rejected} rejected by validation. The previous and current epoch's skills on "
            f"the same tasks:\n{comparison}\n\nRewrite the memory in at most 8 short lines: "
            f"what to do more of, what to avoid. Reply between <{GUIDANCE_TAG}> and "
            f"</{GUIDANCE_TAG}>.")
