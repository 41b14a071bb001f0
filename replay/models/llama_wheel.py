"""A portable llama-cpp-python, built once and kept by its build flags, then checked by one call.

llama-cpp-python builds llama.cpp from source, by default with `-march=native`. On some CPUs
(e.g. ones reporting AVX-512 and AMX) that library crashes in its first `decode`, in the middle
of a run. So the default build here is portable (AVX2/FMA/F16C, no native tuning), and the
wheel it gives is kept in a directory named after a digest of everything that went into it
(requirement, CMake flags, interpreter, machine): pip's own wheel cache is keyed by the source
archive alone, so it would hand every later venv the build that crashed. `CMAKE_ARGS` set in the
environment replaces the portable flags (and so names another directory).

After installing, a subprocess loads the model and asks for one token; a crash there becomes
one line saying what to do, instead of a segfault at the first target call.

`python -m replay.models.llama_build [--rebuild] [--check-only]` runs both (`llama_build.py`).
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import signal
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import attrs

from stratune_core.records.errors import StraTuneError

REQUIREMENT = "llama-cpp-python>=0.3.2"  # the `local` extra in pyproject.toml
PORTABLE_CMAKE_ARGS = "-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON"
WHEELS_ENV = "STRATUNE_WHEELS"
SMOKE_TIMEOUT_S = 300.0
# One token through the real chat path: what the first target call of a run does.
_SMOKE = (
    "import sys, llama_cpp\n"
    "llm = llama_cpp.Llama(model_path=sys.argv[1], n_ctx=256, n_threads=1, verbose=False)\n"
    "out = llm.create_chat_completion([{'role': 'user', 'content': 'Say hi.'}],"
    " max_tokens=1, temperature=0.0)\n"
    "print(out['choices'][0]['finish_reason'])\n"
)

Runner = Callable[[Sequence[str], dict[str, str]], int]


@attrs.frozen(kw_only=True)
class BuildFlags:
    requirement: str
    cmake_args: str
    python: str  # interpreter tag, e.g. cp311
    machine: str

    @classmethod
    def current(cls, environ: dict[str, str] | None = None) -> BuildFlags:
        env = os.environ if environ is None else environ
        tag = f"{sys.implementation.name[:2]}{sys.version_info.major}{sys.version_info.minor}"
        return cls(requirement=REQUIREMENT,
                   cmake_args=env.get("CMAKE_ARGS", "").strip() or PORTABLE_CMAKE_ARGS,
                   python=tag, machine=f"{platform.system()}-{platform.machine()}".lower())

    def digest(self) -> str:
        document = json.dumps(attrs.asdict(self), sort_keys=True)
        return hashlib.sha256(document.encode()).hexdigest()[:16]


def wheel_root(environ: dict[str, str] | None = None) -> Path:
    env = os.environ if environ is None else environ
    if env.get(WHEELS_ENV):
        return Path(env[WHEELS_ENV])
    cache = Path(env.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "stratune" / "llama-cpp-python"


def wheel_dir(flags: BuildFlags, root: Path) -> Path:
    return root / flags.digest()


def built_wheel(directory: Path) -> Path | None:
    wheels = sorted(directory.glob("llama_cpp_python-*.whl"))
    return wheels[-1] if wheels else None


def run_command(command: Sequence[str], env: dict[str, str]) -> int:
    return subprocess.run(list(command), env=env, check=False).returncode


def build(flags: BuildFlags, directory: Path, *, run: Runner = run_command,
          python: str = sys.executable) -> Path:
    """Build the wheel into `directory` (once) and return it."""
    found = built_wheel(directory)
    if found is not None:
        return found
    directory.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "CMAKE_ARGS": flags.cmake_args, "FORCE_CMAKE": "1",
           "CMAKE_BUILD_PARALLEL_LEVEL": str(os.cpu_count() or 1)}
    # --no-cache-dir: pip's cache would return a wheel built with other flags.
    command = [python, "-m", "pip", "wheel", "--no-deps", "--no-cache-dir", "--no-binary",
               "llama-cpp-python", "-w", str(directory), flags.requirement]
    if run(command, env) != 0:
        raise StraTuneError(f"`CMAKE_ARGS='{flags.cmake_args}' {' '.join(command)}` failed; run "
                            "it yourself to see why (llama-cpp-python needs a C++ compiler and "
                            "CMake)")
    (directory / "flags.json").write_text(
        json.dumps(attrs.asdict(flags), indent=2, sort_keys=True) + "\n")
    found = built_wheel(directory)
    if found is None:
        raise StraTuneError(f"{directory}: pip reported success but left no llama_cpp_python "
                            "wheel there; delete the directory and run again")
    return found


def install(wheel: Path, *, run: Runner = run_command, python: str = sys.executable) -> None:
    """Install that very wheel, replacing any llama-cpp-python already in the venv."""
    env = dict(os.environ)
    for command in ([python, "-m", "pip", "install", "-q", "--force-reinstall", "--no-deps",
                     str(wheel)],
                    # its dependencies, and the server's: `python -m llama_cpp.server`
                    [python, "-m", "pip", "install", "-q", f"{wheel}[server]"]):
        if run(command, env) != 0:
            raise StraTuneError(f"`{' '.join(command)}` failed; run it yourself to see why")


@attrs.frozen(kw_only=True)
class SmokeResult:
    ok: bool
    message: str  # one line: what happened and, on failure, what to do


def smoke_test(gguf: Path, *, python: str = sys.executable,
               timeout_s: float = SMOKE_TIMEOUT_S) -> SmokeResult:
    """Load the model in a subprocess and ask for one token: a crash there harms nothing."""
    try:
        done = subprocess.run([python, "-c", _SMOKE, str(gguf)], capture_output=True, text=True,
                              timeout=timeout_s, check=False)
    except subprocess.TimeoutExpired:
        return SmokeResult(ok=False, message=(
            f"llama-cpp-python took over {timeout_s:.0f} s for one token of {gguf.name}; the "
            "machine is overloaded or the build is broken: rebuild with `python -m "
            "replay.models.llama_build --rebuild`"))
    if done.returncode == 0:
        return SmokeResult(ok=True, message=f"llama-cpp-python answered one call with {gguf.name}")
    return SmokeResult(ok=False, message=crash_advice(done.returncode, done.stderr))


def crash_advice(returncode: int, stderr: str) -> str:
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        return (f"llama-cpp-python crashed ({name}) on its first call: its llama.cpp was built "
                "for another CPU (e.g. with -march=native); rebuild it portable with `python -m "
                "replay.models.llama_build --rebuild` (or `make local`), or set CMAKE_ARGS to flags "
                f"this CPU supports, e.g. CMAKE_ARGS='{PORTABLE_CMAKE_ARGS}'")
    last = next((line for line in reversed(stderr.splitlines()) if line.strip()), "no output")
    return (f"llama-cpp-python failed its one-call check (exit {returncode}: {last.strip()}); "
            "reinstall it with `python -m replay.models.llama_build --rebuild`")


def ensure_portable(*, rebuild: bool = False, run: Runner = run_command,
                    python: str = sys.executable, say: Callable[[str], None] = print) -> Path:
    """Build (or reuse) the wheel for the current flags and install it; the wheel's path."""
    flags = BuildFlags.current()
    directory = wheel_dir(flags, wheel_root())
    if rebuild and (found := built_wheel(directory)) is not None:
        found.unlink()
    if built_wheel(directory) is None:
        say(f"building llama-cpp-python with CMAKE_ARGS='{flags.cmake_args}' into {directory} "
            "(once; about 5-8 minutes on 2 cores)")
    wheel = build(flags, directory, run=run, python=python)
    say(f"installing {wheel}")
    install(wheel, run=run, python=python)
    return wheel
