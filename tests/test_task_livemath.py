"""LiveMath: label parsing traps, prompt, scoring and the loader on our own fixtures."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from llm_cache.records import CallKind, Response, Role
from replay.tasks import livemath as loader
from stratune_core.records.base import Sample
from stratune_core.tasks.common import Placement, Splits
from stratune_core.tasks.livemath import LiveMathItem, LiveMathTask, parse_label


@pytest.mark.parametrize(
    ("text", "label"),
    [
        ("Work...\nANSWER: C", "C"),
        ("ANSWER: B\nOn reflection ANSWER: (D)", "D"),
        ("Answer: **E**", "E"),
        ("ANSWER：B", "B"),
        ("so <answer>C</answer>", "C"),
        ("ANSWER: C then <answer>B</answer>", "B"),
        ("I pick option D.", "D"),
        ("The choice is (B)", "B"),
        ("Final: **C**", "C"),
        ("Therefore the right one is E.", "E"),
        ("So it must be A.", "A"),
    ],
)
def test_labels_found(text: str, label: str) -> None:
    """Explicit and marked labels are read, the last one winning."""
    assert parse_label(text) == label


@pytest.mark.parametrize(
    "text",
    [
        "A stronger result can be proven, so none fits.",
        "answer: b",
        "Answer: Because the series diverges",
        "We get A sequence converging",
        "",
        "No idea at all.",
    ],
)
def test_traps_give_no_label(text: str) -> None:
    """The article "A", a lower-case letter and words starting with a label letter are no answer."""
    assert parse_label(text) is None


def test_explicit_label_beats_later_article() -> None:
    """An ANSWER line wins over an article "A" in a later sentence."""
    assert parse_label("ANSWER: D\nA short check confirms it.") == "D"


def test_fallback_only_reads_the_tail() -> None:
    """A bare letter far from the end (outside the last 200 chars) is ignored."""
    assert parse_label("(C) " + "x " * 150) is None


def _task(placement: str = "system") -> LiveMathTask:
    item = LiveMathItem(
        question="What is 1+1?",
        choices=(("A", "1"), ("B", "2"), ("C", "3"), ("D", "4"), ("E", "None of these")),
        correct_label="B",
        correct_text="2",
    )
    sample = Sample(id="q1", stratum="202511", payload=item)
    return LiveMathTask(
        splits=Splits(name="t", train=(sample,), test=(sample,)),
        initial_skill="skill",
        placement=placement,
    )


def test_request_carries_skill_and_choices() -> None:
    """One target request: the skill as system text, the question and lettered choices."""
    task = _task()
    (req,) = task.requests("SKILL", task.split("train")[0], "m")
    assert req.role is Role.TARGET and req.kind is CallKind.TARGET_EXECUTION
    assert req.system == "SKILL"
    assert req.user_text() == (
        "What is 1+1?\n\nChoices:\nA. 1\nB. 2\nC. 3\nD. 4\nE. None of these\n\n"
        "Select the single correct choice."
    )


def test_user_placement_moves_the_skill() -> None:
    """With user_prefix the system prompt is empty and the user turn starts with the skill."""
    task = _task("user_prefix")
    (req,) = task.requests("SKILL", task.split("train")[0], "m")
    assert req.system == "" and req.user_text().startswith("SKILL\n\nWhat is 1+1?")
    assert task.placement is Placement.USER_PREFIX


def test_scores() -> None:
    """Right label 1 with aux 1; wrong label 0 with aux 1; no label 0 with aux 0."""
    task = _task()
    sample = task.split("train")[0]
    right = task.score(sample, (Response(text="ANSWER: B"),))
    wrong = task.score(sample, (Response(text="ANSWER: C"),))
    none = task.score(sample, (Response(text="hmm"),))
    assert (right.value, right.aux, right.summary) == (1.0, 1.0, "")
    assert (wrong.value, wrong.aux) == (0.0, 1.0) and "correct is B" in wrong.summary
    assert (none.value, none.aux) == (0.0, 0.0) and "ANSWER" in none.summary
    assert task.expected(sample) == "ANSWER: B (2)"


def test_info_is_binary_with_threshold_one() -> None:
    info = _task().info
    assert (info.binary, info.success_threshold, info.name) == (True, 1.0, "livemath")


def _write_split(folder: Path, ids: list[str], labels: dict[str, str]) -> None:
    folder.mkdir(parents=True)
    choices = [{"label": x, "text": f"choice {x}"} for x in "ABCDE"]
    (folder / "tasks.jsonl").write_text(
        "".join(
            json.dumps({"id": i, "month": i.split(":")[0], "question": f"Q {i}", "choices": choices})
            + "\n"
            for i in reversed(ids)
        )
    )
    (folder / "labels.jsonl").write_text(
        "".join(
            json.dumps({"id": i, "correct_label": labels[i], "correct_text": "t",
                        "substitution_resistant": False}) + "\n"
            for i in ids
        )
    )
    (folder / "task_ids.json").write_text(json.dumps(ids))


def test_loader_reads_official_layout(tmp_path: Path) -> None:
    """Samples follow task_ids.json order, labels are joined, strata come from the meta file."""
    data = tmp_path / "data"
    _write_split(data / "LiveMathematicianBench/train", ["202511:1", "202511:2"], {"202511:1": "A", "202511:2": "E"})
    _write_split(data / "LiveMathematicianBench/test", ["202605:1"], {"202605:1": "C"})
    strata = tmp_path / "strata/livemath"
    strata.mkdir(parents=True)
    (strata / "strata_meta_train.json").write_text(
        json.dumps({"202511:1": {"month": "202511"}, "202511:2": {"month": "202511"}})
    )
    (tmp_path / "initial_skills").mkdir()
    (tmp_path / "initial_skills/livemath.txt").write_text("THEIR SKILL\n")
    task = loader.load(data)
    train = task.split("train")
    assert [s.id for s in train] == ["202511:1", "202511:2"]
    assert [s.payload.correct_label for s in train] == ["A", "E"]
    assert [s.stratum for s in train] == ["202511", "202511"]
    assert task.info.initial_skill == "THEIR SKILL"
    assert [s.id for s in task.split("test")] == ["202605:1"]


def test_loader_without_strata_or_skill_uses_defaults(tmp_path: Path) -> None:
    """No strata file: one stratum; no initial_skills/: the bundled skill."""
    _write_split(tmp_path / "LiveMathematicianBench/train", ["1:1"], {"1:1": "A"})
    _write_split(tmp_path / "LiveMathematicianBench/test", ["2:1"], {"2:1": "B"})
    task = loader.load(tmp_path)
    assert task.split("train")[0].stratum == "all"
    assert "ANSWER: <letter A-E>" in task.info.initial_skill


def test_livemath_preset_reaches_the_manifest() -> None:
    """Paper Table 5: LiveMath screens on 24 + 24 samples. The task's preset is a config layer
    (after the profile, before the user's file and flags) and the manifest holds the effective
    values; a flag still wins."""
    from replay.run.options import RunOptions, build_config, new_manifest
    from replay.rundir.serde import TaskSpec, manifest_to_data

    options = RunOptions(task=TaskSpec(spec="livemath"), target="anthropic:claude-haiku-4-5",
                         optimizer="anthropic:claude-sonnet-4-6")
    manifest = manifest_to_data(new_manifest(options, build_config(options, _task())))
    assert (manifest["config"]["screen_solved"], manifest["config"]["screen_random"]) == (24, 24)
    flagged = RunOptions(task=options.task, target=options.target, optimizer=options.optimizer,
                         overrides=(("screen_random", 10),))
    config = build_config(flagged, _task())
    assert (config.screen_solved, config.screen_random) == (24, 10)
