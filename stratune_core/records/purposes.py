"""What the baselines' target executions and optimizer calls are for."""

from __future__ import annotations

import enum


class MethodPurpose(enum.StrEnum):
    """What a group of a baseline's target executions paid for."""

    ROLLOUT = "rollout"  # the current skill on a training minibatch or batch
    VALIDATION = "validation"  # a skill on the method's internal validation split
    CONSTRUCTION = "construction"  # Iter-CoT: zero-shot chain of thought on a training sample
    REVISION = "revision"  # Iter-CoT: one revision turn of a wrong answer
    TRAJECTORIES = "trajectories"  # Trace2Skill: the initial skill on the evolution samples
    SELECTION = "selection"  # a candidate skill scored to choose the final skill
    LONGITUDINAL = "longitudinal"  # SkillOpt: two epochs' skills on the same samples


class UpdateVerdict(enum.StrEnum):
    """What became of a proposed skill update."""

    KEPT = "kept"  # it replaced the current skill
    REVERTED = "reverted"  # its validation score dropped: the current skill stays
    UNCHANGED = "unchanged"  # the update wrote the current skill again
    UNUSABLE = "unusable"  # no skill could be read from the optimizer's reply
    UNAFFORDABLE = "unaffordable"  # its validation did not fit in the budget
