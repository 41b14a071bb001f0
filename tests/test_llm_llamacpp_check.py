"""A llama.cpp library built for another CPU is caught in a child process before the run's own
process loads it, once per library build and CPU. A stand-in `llama_cpp` package (its import
kills itself with SIGILL, as such a library does at its first computation) plays the library,
so no model or build is needed."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from llm_cache.backends import llamacpp_check
from llm_cache.backends.llamacpp import LlamaCppBackend
from llm_cache.errors import LLMFatalError
from llm_cache.records import Message, Request, Role

CRASHES = "import os, signal\nos.kill(os.getpid(), signal.SIGILL)\n"
# Counts its runs, then stands in for a working library just far enough for the check.
WORKS = """
import os
with open(os.environ["CHECK_RUNS"], "a") as fh:
    fh.write("run\\n")


class Llama:
    def __init__(self, **_):
        pass

    def tokenize(self, text):
        return [1]

    def eval(self, tokens):
        pass
"""


@pytest.fixture
def library(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty stand-in package first on the path, and a private check cache."""
    package = tmp_path / "site" / "llama_cpp"
    (package / "lib").mkdir(parents=True)
    (package / "lib" / "libllama.so").write_bytes(b"build one")
    (package / "lib" / "libllama.so.0").symlink_to("libllama.so")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("CHECK_RUNS", str(tmp_path / "runs"))
    monkeypatch.delitem(sys.modules, "llama_cpp", raising=False)
    return package


def _model(tmp_path: Path) -> Path:
    gguf = tmp_path / "model.gguf"
    gguf.write_bytes(b"GGUF")
    return gguf


def _call(backend: LlamaCppBackend) -> None:
    backend.complete_sync(Request(role=Role.TARGET, model=backend.canonical, system="s",
                                  messages=(Message.user("hi"),), max_tokens=4))


def test_a_library_for_another_cpu_is_refused_before_the_run_loads_it(
    library: Path, tmp_path: Path
) -> None:
    """The first call fails with one line naming the signal and `make local`; the library was
    never imported into this process, and the verdict is kept for the next run."""
    (library / "__init__.py").write_text(CRASHES)
    backend = LlamaCppBackend(_model(tmp_path))
    with pytest.raises(LLMFatalError) as caught:
        _call(backend)
    message = str(caught.value)
    assert "SIGILL, Illegal instruction" in message and "`make local`" in message, message
    assert "\n" not in message
    assert "llama_cpp" not in sys.modules
    kept = list(llamacpp_check.checks_dir().iterdir())
    assert [p.read_text() for p in kept] == ["crashed 4\n"], kept
    # A later run on the same build and CPU is refused from the kept verdict, without a child.
    (library / "__init__.py").write_text(WORKS)
    with pytest.raises(LLMFatalError, match="SIGILL"):
        _call(LlamaCppBackend(_model(tmp_path)))
    assert not (tmp_path / "runs").exists()


def test_the_check_runs_once_per_build_and_cpu(library: Path, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """A working library is checked once; the same build on the same CPU is not checked again,
    a rebuilt library or another CPU is."""
    (library / "__init__.py").write_text(WORKS)
    gguf = _model(tmp_path)
    runs = tmp_path / "runs"
    for _ in range(3):
        llamacpp_check.check_library(gguf)
    assert runs.read_text().count("run") == 1
    (library / "lib" / "libllama.so").write_bytes(b"build two")
    llamacpp_check.check_library(gguf)
    assert runs.read_text().count("run") == 2
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("vendor_id\t: Other\nflags\t\t: sse2 avx512f\n\nprocessor\t: 1\n")
    real = llamacpp_check.cpu_digest
    monkeypatch.setattr(llamacpp_check, "cpu_digest", lambda: real(cpuinfo))
    llamacpp_check.check_library(gguf)
    llamacpp_check.check_library(gguf)
    assert runs.read_text().count("run") == 3


def test_a_failure_that_is_not_a_crash_is_left_to_the_backend(library: Path,
                                                                tmp_path: Path) -> None:
    """An exception in the child (a broken model, say) is no verdict on the library: nothing
    is kept, and the check does not claim a CPU problem."""
    (library / "__init__.py").write_text("raise ValueError('bad model file')\n")
    llamacpp_check.check_library(_model(tmp_path))
    assert not llamacpp_check.checks_dir().exists()


def test_the_cpu_digest_follows_the_instruction_set_flags(tmp_path: Path) -> None:
    """Two CPUs that differ only in a flag (AVX-512) get different digests; the order of the
    flags and the other processors' blocks do not matter."""
    one, two, three = (tmp_path / n for n in ("one", "two", "three"))
    one.write_text("vendor_id\t: GenuineIntel\nflags\t\t: sse2 avx2\n\nprocessor\t: 1\nflags: x\n")
    two.write_text("vendor_id\t: GenuineIntel\nflags\t\t: sse2 avx2 avx512f\n")
    three.write_text("vendor_id\t: GenuineIntel\nflags\t\t: avx2 sse2\n")
    digests = [llamacpp_check.cpu_digest(p) for p in (one, two, three)]
    assert digests[0] != digests[1] and digests[0] == digests[2]
