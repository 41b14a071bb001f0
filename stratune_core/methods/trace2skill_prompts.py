"""Trace2Skill's optimizer calls, in our own words: an analyst per trajectory (lessons from a
success or a failure), a merge per group of records (each record the lessons of a trajectory or
of an earlier merge), and the writing of the skill."""

from __future__ import annotations

from collections.abc import Sequence

# The version of these prompts a run records ("3": the first recorded). Change it whenever
# their bytes change.
PROMPT_VERSION = "3"

LESSON_TAG = "lesson"
RECORD_TAG = "record"
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


def merge_prompt(records: Sequence[Sequence[str]]) -> str:
    items = "\n".join(f"<{RECORD_TAG}>\n" + _lessons(r) + f"\n</{RECORD_TAG}>" for r in records)
    return (f"Lessons from several trajectories, one record each:\n{items}\n\nMerge these "
            "records into one: merge duplicates, generalise lessons that say the same thing for "
            "different cases, resolve conflicts in favour of the better supported lesson, and "
            "drop lessons specific to one task. Reply with the consolidated lessons, each "
            f"between <{LESSON_TAG}> and </{LESSON_TAG}>.")


def write_prompt(skill: str, lessons: Sequence[str]) -> str:
    items = _lessons(lessons)
    return (f"The current skill:\n<skill>\n{skill}\n</skill>\n\nConsolidated lessons:\n{items}"
            "\n\nWrite the improved skill: keep the task statement and the required response "
            "format exactly, and add the lessons as clear, general guidance. Reply with the "
            f"complete skill between <{SKILL_TAG}> and </{SKILL_TAG}>.")


def _lessons(lessons: Sequence[str]) -> str:
    return "\n".join(f"<{LESSON_TAG}>{x}</{LESSON_TAG}>" for x in lessons)
