"""Agent Skills folders: SKILL.md's front matter checked against the format, its body as the
initial skill of `train --skill DIR`, the learned skill written back as a folder of the same
shape, and bad folders refused in one line (exit 2, nothing written)."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from replay.skills.agent_skill import (
    BODY_MAX_CHARS,
    SKILL_FILE,
    SkillFolderError,
    read_skill_folder,
    skill_markdown,
    write_skill_folder,
)
from stratune_core.records.ids import text_id
from tests.support.cli import TOY_RUN, main

FRONT = ("name: toy-skill\n"
         "description: Answers toy questions. Use when a toy word needs an answer.\n"
         "license: Apache-2.0\n"
         "metadata:\n  author: someone\n  version: \"1.0\"\n"
         "allowed-tools: Read\n")
BODY = "# Toy\n\nAnswer with the word inside <answer></answer> tags."


def _folder(tmp: Path, front: str = FRONT, body: str = BODY, name: str = "toy-skill") -> Path:
    folder = tmp / name
    (folder / "references").mkdir(parents=True, exist_ok=True)
    (folder / "references" / "notes.md").write_text("see the toy rules\n")
    (folder / SKILL_FILE).write_text(f"---\n{front}---\n\n{body}\n", encoding="utf-8")
    return folder


def test_the_body_is_the_skill_and_the_front_matter_is_kept(tmp_path: Path) -> None:
    """Name and description are read; the front matter's text is kept byte for byte."""
    skill = read_skill_folder(_folder(tmp_path))
    assert (skill.name, skill.body) == ("toy-skill", BODY)
    assert skill.description.startswith("Answers toy questions")
    assert skill.front_matter == FRONT
    assert read_skill_folder(skill.path).body == BODY  # SKILL.md itself names its folder


def test_written_folder_has_the_same_shape(tmp_path: Path) -> None:
    """The other files are copied, the front matter is unchanged, the body is the new text;
    reading it back gives the new text."""
    skill = read_skill_folder(_folder(tmp_path / "in"))
    out = write_skill_folder(skill, "Answer in capitals.\n", tmp_path / "out")
    assert out == tmp_path / "out" / "toy-skill"
    assert (out / "references" / "notes.md").read_text() == "see the toy rules\n"
    again = read_skill_folder(out)
    assert (again.front_matter, again.body) == (FRONT, "Answer in capitals.")
    assert (out / SKILL_FILE).read_text() == skill_markdown(skill, "Answer in capitals.")


BAD = [
    ("no front matter", None, "just a skill", "front matter: missing"),
    ("unclosed", "name: toy-skill\n", None, "no closing '---'"),
    ("not YAML", "name: [toy\n", BODY, "does not parse as YAML"),
    ("a list", "- a\n- b\n", BODY, "expected YAML fields"),
    ("missing name", "description: d\n", BODY, "field 'name': missing"),
    ("upper case", "name: Toy-Skill\ndescription: d\n", BODY, "field 'name'"),
    ("double hyphen", "name: toy--skill\ndescription: d\n", BODY, "field 'name'"),
    ("other folder", "name: other-skill\ndescription: d\n", BODY, "differs from the folder"),
    ("no description", "name: toy-skill\n", BODY, "field 'description': missing"),
    ("long description", f"name: toy-skill\ndescription: {'d' * 1025}\n", BODY,
     "field 'description': 1025 characters"),
    ("long compatibility", f"name: toy-skill\ndescription: d\ncompatibility: {'c' * 501}\n",
     BODY, "field 'compatibility'"),
    ("numeric metadata", "name: toy-skill\ndescription: d\nmetadata:\n  version: 1.0\n", BODY,
     "field 'metadata'"),
    ("number as name", "name: 7\ndescription: d\n", BODY, "field 'name': expected text"),
    ("empty body", "name: toy-skill\ndescription: d\n", "  \n", "body: empty"),
    ("long body", "name: toy-skill\ndescription: d\n", "x" * (BODY_MAX_CHARS + 1),
     "body: 200,001 characters"),
]


@pytest.mark.parametrize(("case", "front", "body", "named"), BAD, ids=[b[0] for b in BAD])
def test_bad_folders_name_the_file_and_the_field(tmp_path: Path, case: str, front: str | None,
                                                 body: str | None, named: str) -> None:
    """Each defect is one line naming SKILL.md and what is wrong in it."""
    folder = tmp_path / "toy-skill"
    folder.mkdir()
    if front is None:
        text = body or ""
    elif body is None:
        text = f"---\n{front}"
    else:
        text = f"---\n{front}---\n{body}"
    (folder / SKILL_FILE).write_text(text, encoding="utf-8")
    with pytest.raises(SkillFolderError) as caught:
        read_skill_folder(folder)
    message = str(caught.value)
    assert message.startswith(str(folder / SKILL_FILE)), message
    assert named in message and "\n" not in message, message


def test_a_folder_without_skill_md_says_what_it_needs(tmp_path: Path) -> None:
    with pytest.raises(SkillFolderError, match=r"SKILL\.md: not found; an Agent Skills folder"):
        read_skill_folder(tmp_path)


@pytest.mark.parametrize("case", ["missing name", "not YAML", "long body"])
def test_train_refuses_a_bad_folder_before_writing(tmp_path: Path, capsys, case: str) -> None:
    """`train --skill DIR` with a bad folder: exit 2, one line naming the file, no run dir."""
    _, front, body, named = next(b for b in BAD if b[0] == case)
    folder = tmp_path / "toy-skill"
    folder.mkdir()
    (folder / SKILL_FILE).write_text(f"---\n{front}---\n{body}", encoding="utf-8")
    out = tmp_path / "run"
    code = main(["train", *TOY_RUN, "--skill", str(folder), "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1, err
    assert str(folder / SKILL_FILE) in err and named in err, err
    assert not out.exists()


def test_train_with_a_skill_folder_in_and_out(tmp_path: Path, capsys) -> None:
    """The folder's body starts the run; the final skill comes out as a folder of the same
    shape in OUT/skill/; the run replays offline, and `evaluate --skill` takes the folder."""
    folder = _folder(tmp_path / "skills")
    out = tmp_path / "run"
    assert main(["train", *TOY_RUN, "--skill", str(folder), "--out", str(out)]) == 0
    said = capsys.readouterr().out
    assert "Agent Skills folder" in said
    initial = gzip.decompress((out / "blobs" / f"{text_id(BODY)}.txt.gz").read_bytes())
    assert initial.decode() == BODY  # the run started from the folder's body
    learned = read_skill_folder(out / "skill" / "toy-skill")
    final = (out / "final_skill.txt").read_text(encoding="utf-8")
    assert learned.body == final.strip() and learned.body != BODY
    assert learned.front_matter == FRONT
    assert (out / "skill" / "toy-skill" / "references" / "notes.md").is_file()
    assert main(["replay", str(out)]) == 0
    assert "replay OK" in capsys.readouterr().out
    assert main(["evaluate", "--task", "toy", "--target", "scripted:toy-target", "--skill",
                 str(out / "skill" / "toy-skill"), "--cache-dir", str(tmp_path / "c")]) == 0
    assert "score" in capsys.readouterr().out


def test_another_folder_is_another_run(tmp_path: Path, capsys) -> None:
    """The folder is part of the run's task: a rerun with another folder is refused."""
    out = tmp_path / "run"
    assert main(["train", *TOY_RUN, "--max-rounds", "1", "--skill",
                 str(_folder(tmp_path / "a")), "--out", str(out)]) == 0
    capsys.readouterr()
    other = _folder(tmp_path / "b", body="Answer in capitals.")
    assert main(["train", *TOY_RUN, "--max-rounds", "1", "--skill", str(other),
                 "--out", str(out)]) == 2
    assert "holds a different run: task differ" in capsys.readouterr().err


def test_replay_detects_an_edited_learned_skill(tmp_path: Path, capsys) -> None:
    """The learned folder is part of the trace: an edited body fails `stratune replay`."""
    out = tmp_path / "run"
    assert main(["train", *TOY_RUN, "--max-rounds", "2", "--skill",
                 str(_folder(tmp_path / "skills")), "--out", str(out)]) == 0
    skill_md = out / "skill" / "toy-skill" / SKILL_FILE
    skill_md.write_text(skill_md.read_text() + "\nAlways answer 42.\n")
    capsys.readouterr()
    assert main(["replay", str(out)]) == 1
    said = capsys.readouterr().out
    assert "replay FAILED" in said and "differs from the recomputed final skill" in said
