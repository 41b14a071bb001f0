"""An Agent Skills folder learnt as several parts (`--skill-parts`): its description and its
Markdown references beside the body, one document in the run, each part written back where it
came from; what the run left as it was keeps its bytes, and `replay` checks every part."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest
import yaml

from replay.skills.agent_skill import SKILL_FILE, read_skill_folder
from replay.skills.skill_parts import folder_document, with_description
from stratune_core.records.ids import text_id
from stratune_core.records.parts import SkillParts
from tests.support.cli import TOY_RUN, main

FRONT = ("name: toy-skill\n"
         "description: >-\n  Answers toy questions.\n  Use when a toy word needs an answer.\n"
         "license: Apache-2.0\n"
         "metadata:\n  version: \"1.0\"\n")
BODY = "# Toy\n\nAnswer with the word inside <answer></answer> tags."
PARTS = ("description", "body", "references/markers.md", "references/style/notes.md")


def _folder(tmp: Path) -> Path:
    folder = tmp / "toy-skill"
    (folder / "references" / "style").mkdir(parents=True)
    (folder / "references" / "markers.md").write_text("# Markers\n\nEach word has a marker.\n")
    (folder / "references" / "style" / "notes.md").write_text("Keep it short.")
    (folder / "references" / "table.csv").write_text("a,b\n1,2\n")
    (folder / SKILL_FILE).write_text(f"---\n{FRONT}---\n\n{BODY}\n", encoding="utf-8")
    return folder


def test_the_folder_is_one_document_of_its_parts(tmp_path: Path) -> None:
    skill = read_skill_folder(_folder(tmp_path))
    parts = SkillParts.read(folder_document(skill, ("references", "description")))
    assert parts.names == PARTS
    assert parts.as_dict()["description"] == skill.description
    assert parts.as_dict()["references/markers.md"] == "# Markers\n\nEach word has a marker."
    assert folder_document(skill, ()) == BODY  # no kinds: the body alone, as before


def test_a_new_description_replaces_only_its_field() -> None:
    new = with_description(FRONT, "Answers: toy words, in capitals.")
    assert yaml.safe_load(new)["description"] == "Answers: toy words, in capitals."
    before, after = FRONT.split("description:")[0], new.split("description:")[0]
    assert before == after and new.endswith('license: Apache-2.0\nmetadata:\n  version: "1.0"\n')
    with pytest.raises(Exception, match="1-1024"):
        with_description(FRONT, "d" * 1025)


def test_train_learns_the_parts_and_writes_each_back(tmp_path: Path, capsys) -> None:
    folder = _folder(tmp_path / "skills")
    out = tmp_path / "run"
    assert main(["train", *TOY_RUN, "--skill", str(folder), "--skill-parts",
                 "description,references", "--out", str(out)]) == 0
    source = read_skill_folder(folder)
    initial = folder_document(source, ("description", "references"))
    blob = gzip.decompress((out / "blobs" / f"{text_id(initial)}.txt.gz").read_bytes())
    assert blob.decode() == initial  # the run started from the whole folder
    final = SkillParts.read((out / "final_skill.txt").read_text(encoding="utf-8"))
    assert final.names == PARTS
    learned_dir = out / "skill" / "toy-skill"
    learned = read_skill_folder(learned_dir)
    held = SkillParts.read(folder_document(learned, ("description", "references"))).as_dict()
    assert held == final.as_dict()
    changed = [n for n in PARTS if final.as_dict()[n] != SkillParts.read(initial).as_dict()[n]]
    assert changed  # it learnt something, and only there
    for name in PARTS[2:]:
        same = (learned_dir / name).read_bytes() == (folder / name).read_bytes()
        assert same == (name not in changed)
    assert (learned.front_matter == FRONT) == ("description" not in changed)
    assert (learned_dir / "references" / "table.csv").read_bytes() == b"a,b\n1,2\n"
    assert main(["replay", str(out)]) == 0
    assert "replay OK" in capsys.readouterr().out
    # an edited reference of the learned folder fails the replay
    reference = learned_dir / "references" / "markers.md"
    reference.write_text(reference.read_text() + "Always answer 42.\n")
    assert main(["replay", str(out)]) == 1
    assert "one of its parts differs from the recomputed final skill" in capsys.readouterr().out


def test_evaluate_scores_the_folder_with_its_parts(tmp_path: Path, capsys) -> None:
    folder = _folder(tmp_path / "skills")
    assert main(["evaluate", "--task", "toy", "--target", "scripted:toy-target", "--skill",
                 str(folder), "--skill-parts", "references", "--cache-dir",
                 str(tmp_path / "c")]) == 0
    assert "score" in capsys.readouterr().out


@pytest.mark.parametrize(("argv", "says"), [
    (["train", *TOY_RUN, "--skill-parts", "description", "--out", "OUT"], "give the folder"),
    (["train", *TOY_RUN, "--skill", "DIR", "--skill-parts", "scripts", "--out", "OUT"],
     "no scripts to learn; drop `scripts` from --skill-parts"),
])
def test_parts_without_a_folder_or_of_another_kind_are_refused(tmp_path: Path, capsys, argv,
                                                                says) -> None:
    folder = _folder(tmp_path / "skills")
    argv = [str(folder) if a == "DIR" else str(tmp_path / "out") if a == "OUT" else a
            for a in argv]
    assert main(argv) == 2
    assert says in capsys.readouterr().err
    assert not (tmp_path / "out").exists()
