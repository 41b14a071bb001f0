"""Trace2Skill's optimizer calls, in our own words: an analyst per trajectory (lessons from a
success or a failure), a merge per group of lessons, and the writing of the skill."""

from __future__ import annotations

from collections.abc import Sequence

LESSON_TAG = "lesson"
SKILL_TAG = "new_skill"

ANALYST_SYSTEM = (
    "You analyse one trajectory of a language model that follows a skill (its system prompt) "
    "to solve a task. You extract lessons that would help on other tasks of the same kind."
)

MERGE_SYSTEM = (
    "You consolidate lessons learnt from many trajectories of a language model into a short, "
    "non-redundant set of general lessons."
)

WRITE_SYSTEM = (
    "You write the skill (system prompt) a language model follows, from its current skill and "
    "lessons consolidated from its trajectories."
)


def analyst_prompt(skill: str, trajectory: str, solved: bool) -> str:
    if solved:
        ask = ("The model solved this task. Which of its choices made the difference, stated as "
               "general lessons that would carry over to other tasks?")
    else:
        ask = ("The model failed this task. What went wrong, and which general lesson, added "
               "to the skill, would have prevented it on this and similar tasks?")
    return (f"The skill:\n<skill>\n{skill}\n</skill>\n\nThe trajectory:\n{trajectory}\n\n{ask} "
            f"Give at most 3 lessons, each between <{LESSON_TAG}> and </{LESSON_TAG}>; give "
            "none if nothing generalises.")


def merge_prompt(lessons: Sequence[str]) -> str:
    items = "\n".join(f"<{LESSON_TAG}>{x}</{LESSON_TAG}>" for x in lessons)
    return (f"Lessons from several trajectories:\n{items}\n\nMerge duplicates, generalise "
            "lessons that say the same thing for different cases, resolve conflicts in favour "
            "of the better supported lesson, and drop lessons specific to one task. Reply with "
            f"the consolidated lessons, each between <{LESSON_TAG}> and </{LESSON_TAG}>.")


def write_prompt(skill: str, lessons: Sequence[str]) -> str:
    items = "\n".join(f"<{LESSON_TAG}>{x}</{LESSON_TAG}>" for x in lessons)
    return (f"The current skill:\n<skill>\n{skill}\n</skill>\n\nConsolidated lessons:\n{items}"
            "\n\nWrite the improved skill: keep the task statement and the required response "
            "format exactly, and add the lessons as clear, general guidance. Reply with the "
            f"complete skill between <{SKILL_TAG}> and </{SKILL_TAG}>.")
