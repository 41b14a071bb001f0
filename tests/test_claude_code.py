"""The `claude-code:` target with the real Claude Code CLI (bundled in claude-agent-sdk) against
the tests' own fake Messages API: a run that learns, a strict offline replay that runs every
episode again through the proxy, a SIGKILL in mid-episode resumed identically, the isolation of
an episode, and refusals before anything is paid."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from llm_cache.testing.fake_server import FakeAnthropicServer
from tests.support.harness_world import REPLY_RULE, Responder, write_task

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.skipif(not (Path(sys.executable).parent.parent / "lib").exists(),
                                reason="needs the virtualenv")
TARGET = "claude-code:claude-haiku-4-5"
OPTIMIZER = "anthropic:claude-sonnet-4-6"


def _cli_installed() -> bool:
    try:
        from replay.harness.cli import cli_path

        return cli_path().is_file()
    except Exception:  # noqa: BLE001
        return False


needs_cli = pytest.mark.skipif(not _cli_installed(), reason="claude-agent-sdk not installed")


def stratune(*args: str, fake: FakeAnthropicServer | None = None, home: Path | None = None,
             **env: str) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, "COLUMNS": "100", "ANTHROPIC_API_KEY": "sk-ant-test-not-real", **env}
    if fake is not None:
        full["ANTHROPIC_BASE_URL"] = fake.url
    if home is not None:
        full["HOME"] = str(home)
    return subprocess.run([sys.executable, "-m", "replay.cli", *args], cwd=ROOT, env=full,
                          capture_output=True, text=True, timeout=900, check=False)


def _train(task: Path, out: Path, *extra: str, target: str = TARGET,
           **kw: object) -> subprocess.CompletedProcess[str]:
    return stratune("train", "--task", str(task), "--scorer", "exact", "--target", target,
                    "--optimizer", OPTIMIZER, "--out", str(out), *extra, **kw)  # type: ignore[arg-type]


def _tree(path: Path) -> dict[str, int]:
    return {str(p.relative_to(path)): p.stat().st_size for p in path.rglob("*") if p.is_file()}


@needs_cli
@pytest.mark.slow
def test_a_run_learns_replays_offline_and_leaves_home_untouched(tmp_path):
    task = write_task(tmp_path / "task")
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    (home / ".claude" / "settings.json").write_text('{"mine": true}')
    before = _tree(home)
    out = tmp_path / "run"
    with FakeAnthropicServer(responder=Responder()) as fake:
        done = _train(task, out, "--test-eval", fake=fake, home=home)
        assert done.returncode == 0, done.stderr[-2000:]
        calls = len(fake.requests)
    final = (out / "final_skill.txt").read_text()
    assert REPLY_RULE in final
    scores = sorted(json.loads((out / "evaluation.json").read_text())["scores"].values())
    assert scores == [0.0, 1.0]
    usage = json.loads((out / "usage.json").read_text())
    row = next(r for r in usage["rows"] if r["kind"] == "target_execution")
    assert row["usage"]["input_tokens"] > 0 and row["model"].endswith("@claude-code")
    assert _tree(home) == before  # the user's HOME is never read into or written
    # strict replay: every episode run again through the proxy, no network, the cache read-only
    replayed = stratune("replay", str(out), home=home, ANTHROPIC_BASE_URL="http://127.0.0.1:9")
    assert replayed.returncode == 0 and "replay OK" in replayed.stdout, replayed.stdout
    assert calls  # (the fake server is gone: nothing could have been sent)


@needs_cli
@pytest.mark.slow
def test_sigkill_in_mid_episode_then_the_rerun_is_byte_identical(tmp_path):
    task = write_task(tmp_path / "task", n=3)
    reference, killed = tmp_path / "reference", tmp_path / "killed"
    with FakeAnthropicServer(responder=Responder()) as fake:
        assert _train(task, reference, fake=fake).returncode == 0
    pid_file = tmp_path / "pid"
    with FakeAnthropicServer(responder=Responder(kill_after=3, pid_file=pid_file)) as fake:
        env = {**os.environ, "ANTHROPIC_BASE_URL": fake.url, "ANTHROPIC_API_KEY": "sk-ant-x"}
        run = subprocess.Popen([sys.executable, "-m", "replay.cli", "train", "--task", str(task),
                                "--scorer", "exact", "--target", TARGET, "--optimizer",
                                OPTIMIZER, "--out", str(killed)], cwd=ROOT, env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        pid_file.write_text(str(run.pid))
        assert run.wait(timeout=600) == -9  # killed at the second episode's first call
        assert _train(task, killed, fake=fake).returncode == 0
    assert (killed / "events.jsonl").read_bytes() == (reference / "events.jsonl").read_bytes()


@needs_cli
@pytest.mark.slow
def test_scripts_are_learned_syntax_checked_and_sealed(tmp_path):
    task = write_task(tmp_path / "task", n=8)
    skill = tmp_path / "times"
    (skill / "scripts").mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: times\ndescription: Use this skill for every "
                                    "question about numbers.\n---\nRun scripts/compute.sh with "
                                    "the two numbers and reply with what it prints.\n")
    (skill / "scripts" / "compute.sh").write_text("#!/bin/sh\necho $(($1 + $2))\n")
    out = tmp_path / "run"
    with FakeAnthropicServer(responder=Responder()) as fake:
        done = _train(task, out, "--skill", str(skill), "--skill-parts", "scripts",
                      "--test-eval", fake=fake)
        assert done.returncode == 0, done.stderr[-2000:]
    learned = out / "skill" / "times"
    assert "$1 * $2" in (learned / "scripts" / "compute.sh").read_text()
    assert REPLY_RULE in (learned / "SKILL.md").read_text()
    assert os.access(learned / "scripts" / "compute.sh", os.X_OK)
    seal = json.loads((out / "manifest.json").read_text())["seal"]["skill_folder"]
    names = {f["name"] for f in seal}
    assert {"times/SKILL.md", "times/scripts/compute.sh"} <= {n.split("/", 1)[-1] for n in names}
    (learned / "scripts" / "compute.sh").write_text("#!/bin/sh\necho tampered\n")
    assert stratune("replay", str(out), ANTHROPIC_BASE_URL="http://127.0.0.1:9").returncode != 0


def test_refusals_before_anything_is_paid(tmp_path):
    task = write_task(tmp_path / "task", n=2)
    out = tmp_path / "run"
    batch = _train(task, out, target=f"{TARGET}?batch=on")
    assert batch.returncode == 2 and "Message Batches" in batch.stderr, batch.stderr
    no_key = stratune("train", "--task", str(task), "--scorer", "exact", "--target", TARGET,
                      "--optimizer", OPTIMIZER, "--out", str(out), ANTHROPIC_API_KEY="")
    assert no_key.returncode == 2 and "API key" in no_key.stderr
    bad = tmp_path / "bad"
    (bad / "scripts").mkdir(parents=True)
    (bad / "SKILL.md").write_text("---\nname: other\ndescription: d\n---\nbody\n")
    named = _train(task, out, "--skill", str(bad))
    assert named.returncode == 2 and "name" in named.stderr
    (bad / "SKILL.md").write_text("---\nname bad\n---\nbody\n")
    front = _train(task, out, "--skill", str(bad))
    assert front.returncode == 2 and "front matter" in front.stderr, front.stderr
    (bad / "SKILL.md").write_text("---\nname: bad\ndescription: d\n---\nbody\n")
    (bad / "scripts" / "run.py").write_text("def f(:\n")
    broken = _train(task, out, "--skill", str(bad), "--skill-parts", "scripts")
    assert broken.returncode == 2 and "run.py:1" in broken.stderr, broken.stderr
    assert not out.exists()


def test_the_cli_version_is_refused_when_too_old(monkeypatch):
    from replay.harness import cli
    from stratune_core.records.errors import ConfigError

    monkeypatch.setattr(cli, "cli_version", lambda: "2.0.1 (Claude Code)")
    with pytest.raises(ConfigError, match="older than"):
        cli.check_version()


def test_without_the_extra_the_spec_says_what_to_install(monkeypatch):
    from replay.harness import cli
    from stratune_core.records.errors import ConfigError

    cli.cli_path.cache_clear()
    monkeypatch.setitem(sys.modules, "claude_agent_sdk", None)
    try:
        with pytest.raises(ConfigError, match=r"pip install 'stratune\[claude-code\]'"):
            cli.cli_path()
    finally:
        cli.cli_path.cache_clear()



@needs_cli
@pytest.mark.slow
def test_an_episode_reaches_only_the_proxy_and_writes_only_its_own_directory(tmp_path):
    """A script the skill runs tries to reach the fake API directly and to write in /tmp and
    in the host's project: the sandbox's network holds only the proxy's forwarder, and the
    episode's /tmp and directories are its own."""
    from llm_cache.client import CachedLLM
    from llm_cache.records import Role
    from replay.models import specs as models
    from replay.rundir.serde import TaskSpec
    from stratune_core.tasks.executions import run_jobs

    task_dir = write_task(tmp_path / "task", n=1)
    skill = tmp_path / "probe"
    (skill / "scripts").mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: probe\ndescription: Use this skill for every "
                                    "question.\n---\nRun scripts/probe.sh and reply.\n")
    marker = f"/tmp/stratune-isolation-{os.getpid()}"
    with FakeAnthropicServer(responder=Responder()) as fake:
        port = fake.url.rsplit(":", 1)[1].strip("/")
        (skill / "scripts" / "probe.sh").write_text(
            "#!/bin/sh\n"
            f"touch {marker} {ROOT}/escaped 2>/dev/null\n"
            "python3 -c \"import socket\ntry:\n socket.create_connection(('127.0.0.1', "
            f"{port}), timeout=2); print('reached')\nexcept OSError: print('refused')\"\n")
        os.environ["ANTHROPIC_BASE_URL"], os.environ["ANTHROPIC_API_KEY"] = fake.url, "sk-x"
        try:
            spec = TaskSpec(spec=str(task_dir), scorer="exact", kind="claude-code",
                            skill=str(skill))
            task = models.load_task(spec)
            backend = models.build_backend(TARGET)
            with CachedLLM.open(tmp_path / "cache", backends={Role.TARGET: backend}) as llm:
                sample = task.split("train")[0]
                (calls,) = run_jobs(task, llm, models.canonical_model(TARGET),
                                    [(task.info.initial_skill, sample)])
        finally:
            del os.environ["ANTHROPIC_BASE_URL"]
        transcript = task.score(sample, calls.responses).output
    assert "refused" in transcript and "reached" not in transcript, transcript
    assert not Path(marker).exists() and not (ROOT / "escaped").exists()
