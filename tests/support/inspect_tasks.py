"""Inspect task files' tasks for the `inspect:` bridge tests: the toy world's words
(tests/support/toy.py) as Inspect samples, solvers and scorers, and tasks StraTune refuses.

A standalone task file, loaded by path as `inspect eval` loads one (it imports nothing of
the project's).
"""

from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.model import ChatMessageSystem, ChatMessageUser
from inspect_ai.scorer import (
    Score,
    Scorer,
    Target,
    accuracy,
    choice,
    exact,
    includes,
    match,
    model_graded_fact,
    model_graded_qa,
    scorer,
)
from inspect_ai.solver import TaskState, generate, multiple_choice, system_message
from inspect_ai.util import sandbox

INITIAL = "Answer with the word.\nReturn the final answer inside <answer>...</answer> tags."
WORDS = ("apple", "river", "stone", "cloud", "ember", "frost", "grain", "harbor", "island",
         "jungle", "kettle", "lantern", "meadow", "needle", "orchard", "pepper", "quartz",
         "rocket", "saddle", "timber", "umbrella", "velvet", "walnut", "yonder", "zephyr",
         "anchor", "basket", "candle", "dragon", "engine", "falcon", "garden", "hammer",
         "insect", "jacket", "kitten", "ladder", "magnet", "napkin", "oyster")
MARKERS = ("U", "R", "P")
GOLD = {"U": str.upper, "R": lambda w: w[::-1], "P": lambda w: w}


def words(n: int = 40, split: bool = True, chat: bool = False) -> list[Sample]:
    """Word i has marker U, R or P; every fourth is a test sample (with `split`)."""
    out = []
    for i, word in enumerate(WORDS[:n]):
        marker = MARKERS[i % len(MARKERS)]
        text = f"Word: {word} [{marker}]"
        prompt = [ChatMessageSystem(content="The user names a word."),
                  ChatMessageUser(content=text)] if chat else text
        metadata = {"split": "test" if i % 4 == 3 else "train"} if split else {}
        out.append(Sample(input=prompt, target=f"<answer>{GOLD[marker](word)}</answer>",
                          id=f"w{i:02d}", metadata=metadata))
    return out


@task
def spell() -> Task:
    return Task(dataset=words(), solver=[system_message(INITIAL), generate()],
                scorer=includes(ignore_case=False))


@task
def spell_unsplit() -> Task:
    return Task(dataset=words(split=False), solver=[system_message(INITIAL), generate()],
                scorer=includes(ignore_case=False))


@task
def spell_chat() -> Task:
    return Task(dataset=words(chat=True), solver=generate(), scorer=match(location="any"))


@task
def spell_graded() -> Task:
    return Task(dataset=words(12), solver=[system_message(INITIAL), generate()],
                scorer=model_graded_fact())


@task
def spell_exact() -> Task:
    return Task(dataset=words(8), solver=[system_message(INITIAL), generate()],
                scorer=exact())


@task
def topics() -> Task:
    data = [Sample(input=f"Name a {kind}.", target=answer, id=kind,
                   metadata={"topic": kind, "split": split})
            for kind, answer, split in (("fruit", "apple", "train"), ("tree", "oak", "train"),
                                        ("river", "Nile", "test"))]
    return Task(dataset=data, solver=[system_message("You answer questions about {topic}."),
                                      generate()], scorer=includes())


@task
def capitals() -> Task:
    data = [Sample(input=f"What is the capital of {country}?", choices=list(options),
                   target=answer, id=country, metadata={"split": split})
            for country, options, answer, split in (
                ("France", ("Rome", "Paris", "Lima"), "B", "train"),
                ("Peru", ("Lima", "Oslo", "Rome"), "A", "train"),
                ("Norway", ("Paris", "Lima", "Oslo"), "C", "test"))]
    return Task(dataset=data, solver=multiple_choice(), scorer=choice())


@task
def boxed() -> Task:
    return Task(dataset=words(8), solver=[system_message(INITIAL), generate()],
                scorer=includes(), sandbox="docker")


@task
def own_grader() -> Task:
    return Task(dataset=words(8), solver=[system_message(INITIAL), generate()],
                scorer=model_graded_qa(model="openai/gpt-4o"))


@scorer(metrics=[accuracy()])
def runs_the_answer() -> Scorer:
    """A scorer that executes the answer in the task's sandbox."""

    async def score(state: TaskState, target: Target) -> Score:
        result = await sandbox().exec(["python", "-c", state.output.completion])
        return Score(value=1.0 if result.success else 0.0)

    return score


@task
def needs_sandbox() -> Task:
    return Task(dataset=words(8), solver=[system_message(INITIAL), generate()],
                scorer=runs_the_answer())


@task
def surrogate_input() -> Task:
    """A sample whose input holds a lone surrogate, which no model call can encode."""
    data = words(8)
    data[3] = Sample(input="Spell \ud800 backwards.", target="x", id="s-3",
                     metadata={"split": "train"})
    return Task(dataset=data, solver=[system_message(INITIAL), generate()], scorer=includes())
