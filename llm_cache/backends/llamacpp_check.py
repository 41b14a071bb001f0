"""Whether the installed llama.cpp library runs on this CPU, found out in a child process.

A llama.cpp built for another CPU (`-march=native` on a machine with AVX-512, a wheel built
elsewhere) dies with SIGILL at its first computation, taking the whole run with it and saying
only "Illegal instruction". So before the backend imports `llama_cpp`, a child process loads
the model and evaluates one token. The answer depends only on the library's build and the CPU,
so it is kept in a file named after a digest of both (the library files' contents; the CPU's
vendor, model and instruction-set flags) and the child runs once per pair, not once per run.
Only a crash is a verdict on the library: any other failure (a bad GGUF, a timeout) is left
to the backend's own loading to report, and nothing is kept.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import os
import platform
import signal
import subprocess
import sys
from pathlib import Path

from llm_cache.errors import LLMFatalError

CHECK_TIMEOUT_S = 300.0  # loading a large model on 2 busy cores
# One decode through the library: what the run's first call does first.
_ONE_CALL = (
    "import sys, llama_cpp\n"
    "llm = llama_cpp.Llama(model_path=sys.argv[1], n_ctx=64, n_batch=64, n_threads=1,"
    " verbose=False)\n"
    "llm.eval(llm.tokenize(b'Hi'))\n"
)
_CPU_FIELDS = ("vendor_id", "model name", "flags", "cpu family", "model", "Features",
               "CPU implementer", "CPU part")
REBUILD_HINT = ("rebuild it portably with `make local` in the StraTune checkout (or, if that "
                "was run before, `python -m replay.models.llama_build --rebuild`)")


def library_dir() -> Path | None:
    """The installed llama_cpp package's directory, found without importing it."""
    spec = importlib.util.find_spec("llama_cpp")
    if spec is None or spec.origin is None:
        return None
    return Path(spec.origin).parent


def _libraries(package: Path) -> tuple[tuple[Path, int, int], ...]:
    """The shared libraries the package loads (symlinks name the same files), with the size
    and time that change when they are rebuilt."""
    found = []
    for path in sorted(package.rglob("*.so*")) + sorted(package.rglob("*.dylib")):
        if path.is_symlink() or not path.is_file():
            continue
        info = path.stat()
        found.append((path, info.st_size, info.st_mtime_ns))
    return tuple(found)


def build_digest(package: Path) -> str:
    """A digest of the package's shared libraries' contents."""
    return _contents_digest(package, _libraries(package))


@functools.lru_cache(maxsize=8)
def _contents_digest(package: Path, libraries: tuple[tuple[Path, int, int], ...]) -> str:
    # Read once per process and build: tens of MB, a third of a second each time.
    digest = hashlib.sha256()
    for path, _, _ in libraries:
        digest.update(str(path.relative_to(package)).encode() + b"\0")
        with open(path, "rb") as fh:
            while block := fh.read(1 << 20):
                digest.update(block)
    return digest.hexdigest()[:16]


def cpu_digest(cpuinfo: Path = Path("/proc/cpuinfo")) -> str:
    """A digest of what decides which instructions run: the first CPU's identity and flags
    (the machine type alone where there is no /proc/cpuinfo)."""
    fields = [platform.machine()]
    try:
        first = cpuinfo.read_text(errors="replace").split("\n\n")[0]
    except OSError:
        first = platform.processor()
    for line in first.splitlines():
        key, _, value = line.partition(":")
        if key.strip() in _CPU_FIELDS:
            fields.append(f"{key.strip()}={' '.join(sorted(value.split()))}")
    return hashlib.sha256("\n".join(fields).encode()).hexdigest()[:16]


def checks_dir(environ: dict[str, str] | None = None) -> Path:
    env = os.environ if environ is None else environ
    cache = Path(env.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "stratune" / "llama-cpp-checks"


def _child_env() -> dict[str, str]:
    # The child must find the very package the parent would import.
    return {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}


def _keep(path: Path, verdict: str) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(f".{os.getpid()}.tmp")
        partial.write_text(verdict + "\n")
        partial.replace(path)
    except OSError:
        pass  # a read-only cache: the check runs again next time, nothing worse


def _crash_message(package: Path, verdict: str) -> str:
    number = int(verdict.split()[1])
    try:
        name = f"{signal.Signals(number).name}, {signal.strsignal(number)}"
    except ValueError:
        name = f"signal {number}"
    return (f"the llama.cpp library in {package} crashed ({name}) on a one-call check on this "
            f"CPU ({platform.machine()}): it was built for another CPU (e.g. with -march=native "
            f"elsewhere); {REBUILD_HINT}")


def check_library(gguf: Path, *, python: str = sys.executable,
                  timeout_s: float = CHECK_TIMEOUT_S) -> None:
    """Raise LLMFatalError if the installed llama.cpp crashes on this CPU; return at once
    when this build was already checked on this CPU."""
    package = library_dir()
    if package is None:
        return  # the backend's import says what to install
    kept = checks_dir() / f"{build_digest(package)}-{cpu_digest()}"
    try:
        verdict = kept.read_text().strip()
    except OSError:
        verdict = ""
    if not verdict:
        try:
            done = subprocess.run([python, "-c", _ONE_CALL, str(gguf)], capture_output=True,
                                  env=_child_env(), timeout=timeout_s, check=False)
        except subprocess.TimeoutExpired:
            return
        if done.returncode == 0:
            verdict = "ok"
        elif done.returncode < 0 and -done.returncode in (signal.SIGILL, signal.SIGSEGV,
                                                          signal.SIGBUS, signal.SIGFPE):
            verdict = f"crashed {-done.returncode}"
        else:
            return
        _keep(kept, verdict)
    if verdict != "ok":
        raise LLMFatalError(_crash_message(package, verdict))
