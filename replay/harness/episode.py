"""One episode of the Claude Code CLI in print mode, isolated.

Each episode gets a fresh directory holding its project (with the skill folder under
`.claude/skills/NAME/` and no git repository around it), its own HOME (a `.claude.json` that
pins the device id) and its own TMPDIR; the CLI runs with a session id pinned from the
episode's key, the tools the task declares, `--max-turns`, every non-essential traffic switch
on, and a wall-clock limit. Under bubblewrap (always as root) the project, HOME and TMPDIR are
bound at fixed paths (`/workspace`, `/home/agent`, `/tmp`), the network is the sandbox's own
loopback, whose one listener carries connections to the proxy's Unix socket, and the CLI runs
as the sandbox's unprivileged user; without it (a user without namespaces) the paths are the
episode directory's, which the key normalizes. The user's own `~/.claude` and project are
never read or written: the CLI sees only the episode's HOME and project.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path

from attrs import frozen

from replay.tasks.sandbox import bubblewrap
from replay.tasks.sandbox.layout import interpreter_roots

QUIET = {"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_TELEMETRY": "1",
         "DISABLE_AUTOUPDATER": "1", "DISABLE_ERROR_REPORTING": "1", "DISABLE_BUG_COMMAND": "1"}
DEVICE_ID = "0" * 64  # pinned: a fresh HOME would draw a random one
INSIDE = {"project": "/workspace", "home": "/home/agent", "tmp": "/tmp"}
SANDBOX_PORT = 8123
LAUNCHER = Path(__file__).with_name("launcher.py")


@frozen(kw_only=True)
class EpisodeSpec:
    cli: str
    model: str
    skill: str  # the folder's name
    files: Mapping[str, str]  # path under the skill folder -> text
    prompt: str
    tools: tuple[str, ...]
    max_turns: int
    seconds: float
    session_id: str
    sandboxed: bool


@frozen(kw_only=True)
class EpisodeRun:
    messages: tuple[Mapping[str, object], ...]  # the CLI's stream-json lines
    returncode: int | None  # None: stopped by the wall-clock limit
    stderr: str


def session_id(key: str) -> str:
    """A session id that is the same for the same episode (the CLI wants a UUID)."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"stratune-episode:{key}"))


def _write_tree(root: Path, spec: EpisodeSpec) -> None:
    folder = root / "project" / ".claude" / "skills" / spec.skill
    for name, text in spec.files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        if name.startswith("scripts/"):
            path.chmod(0o755)
    (root / "home").mkdir()
    (root / "tmp").mkdir()
    (root / "home" / ".claude.json").write_text(json.dumps(
        {"userID": DEVICE_ID, "hasCompletedOnboarding": True}), encoding="utf-8")
    for path in (root, *root.rglob("*")):  # the sandboxed CLI runs as another user
        path.chmod(0o777 if path.is_dir() else (path.stat().st_mode | 0o666))


def paths_of(root: Path, sandboxed: bool) -> dict[str, str]:
    """The episode's directories as the CLI sees them, which the key normalizes."""
    if sandboxed:
        return dict(INSIDE)
    return {"project": str(root / "project"), "home": str(root / "home"),
            "tmp": str(root / "tmp")}


def _argv(spec: EpisodeSpec) -> list[str]:
    tools = ",".join(spec.tools)
    return [spec.cli, "-p", spec.prompt, "--output-format", "stream-json", "--verbose",
            "--model", spec.model, "--max-turns", str(spec.max_turns),
            "--session-id", spec.session_id, "--tools", tools, "--allowedTools", tools,
            "--no-session-persistence"]


def _env(base_url: str, paths: Mapping[str, str]) -> dict[str, str]:
    return {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": paths["home"],
            "TMPDIR": paths["tmp"], "LANG": "C.UTF-8", "ANTHROPIC_BASE_URL": base_url,
            "ANTHROPIC_API_KEY": "sk-ant-episode-proxy", **QUIET}


def _sandbox(root: Path, socket: Path, argv: Sequence[str], env: Mapping[str, str]) -> list[str]:
    bwrap = bubblewrap.executable()
    if bwrap is None:
        raise FileNotFoundError("bwrap not found")
    identity = bubblewrap._identity()  # noqa: SLF001 (the sandbox's own identity rules)
    args = [bwrap, *identity, "--die-with-parent", "--new-session", "--hostname", "sandbox",
            *bubblewrap._system_binds(), "--proc", "/proc", *bubblewrap._proc_covers(),  # noqa: SLF001
            "--dev", "/dev", "--perms", "1777", "--tmpfs", "/tmp"]
    for root_dir in interpreter_roots():  # the venv holds the CLI and the launcher's python
        args += bubblewrap._open_parents(root_dir)  # noqa: SLF001
        args += ["--ro-bind", str(root_dir), str(root_dir)]
    for inside in ("/.stratune/launcher.py", INSIDE["project"], INSIDE["home"]):
        args += bubblewrap._open_parents(Path(inside))  # noqa: SLF001 (mount points 0755)
    args += ["--perms", "0755", "--dir", "/etc"]  # a shell reads its files there as nobody
    for shared in ("/etc/bash.bashrc", "/etc/passwd", "/etc/group"):
        args += ["--ro-bind-try", shared, shared]
    args += ["--ro-bind", str(LAUNCHER), "/.stratune/launcher.py",
             "--bind", str(socket), "/.stratune/proxy.sock",
             "--bind", str(root / "project"), INSIDE["project"],
             "--bind", str(root / "home"), INSIDE["home"],
             "--chdir", INSIDE["project"], "--clearenv"]
    for key, value in env.items():
        args += ["--setenv", key, value]
    inner = [sys.executable, "-I", "/.stratune/launcher.py", "/.stratune/proxy.sock",
             str(SANDBOX_PORT), *argv]
    if os.geteuid() == 0:
        inner = [*bubblewrap.SETPRIV, *inner]
    return [*args, "--", *inner]


def run_episode(spec: EpisodeSpec, *, proxy_url: str, socket: Path | None,
                on_start: object = None) -> tuple[EpisodeRun, dict[str, str]]:
    """Run the episode to its end or its wall-clock limit; its directory is removed after."""
    root = Path(tempfile.mkdtemp(prefix="stratune-episode-"))
    try:
        _write_tree(root, spec)
        paths = paths_of(root, spec.sandboxed)
        if callable(on_start):
            on_start(paths)
        if spec.sandboxed:
            assert socket is not None
            argv = _sandbox(root, socket, _argv(spec), _env(f"http://127.0.0.1:{SANDBOX_PORT}",
                                                             paths))
            cwd = str(root)
        else:
            argv, cwd = _argv(spec), str(root / "project")
        env = None if spec.sandboxed else _env(proxy_url, paths)
        try:
            done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True,
                                  timeout=spec.seconds, check=False)
            code: int | None = done.returncode
            out, err = done.stdout, done.stderr
        except subprocess.TimeoutExpired as exc:
            code = None
            out = exc.stdout.decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
            err = exc.stderr.decode() if isinstance(exc.stderr, bytes) else (exc.stderr or "")
        messages = []
        for line in out.splitlines():
            try:
                messages.append(json.loads(line))
            except ValueError:
                continue
        return EpisodeRun(messages=tuple(messages), returncode=code, stderr=err[-2000:]), paths
    finally:
        shutil.rmtree(root, ignore_errors=True)
