"""Shared pieces of the benchmarks: result records, the toy world wired to the real cache and
to the fake Anthropic server, and LLM wrappers that time and count calls.

The toy world (tests/support/toy.py) is imported from the repository, so benchmarks run from the
repo root (`python -m benchmarks.run_all`).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import re
import resource
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from attrs import field, frozen

from llm_cache.backends.base import Backend
from llm_cache.backends.function import FunctionBackend
from llm_cache.records import CallKind, Message, Request, Response, Role
from stratune_core.config.knobs import Config
from stratune_core.prompts.prep_prompt import PREPARATION_SYSTEM
from stratune_core.prompts.templates import SELECTION_SYSTEM
from stratune_core.records.llm import LLM
from tests.support.toy import ToyOptimizer, toy_target

RESULTS_DIR = Path(__file__).resolve().parent / "results"

# Canonical ids as `parse_spec("anthropic:...").canonical` gives them: they are what the fake
# server sees and what the price table prices.
TARGET_MODEL = "claude-haiku-4-5"
OPTIMIZER_MODEL = "claude-sonnet-4-6"


@frozen(kw_only=True)
class BenchResult:
    """One benchmark's headline figure against its target, plus the numbers behind it."""

    name: str
    figure: float
    target: float
    unit: str = "x"
    summary: str
    details: Mapping[str, Any] = field(factory=dict)
    strict: bool = False  # True: the figure must be strictly below the target

    @property
    def met(self) -> bool:
        return self.figure < self.target if self.strict else self.figure <= self.target

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name, "figure": self.figure, "target": self.target, "unit": self.unit,
            "strict": self.strict, "met": self.met, "summary": self.summary,
            "details": dict(self.details), "python": platform.python_version(),
            "machine": platform.machine(), **measured_on(),
        }


def cpu_seconds() -> float:
    """CPU time of this process so far, every thread's, user and system."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def measured_on() -> dict[str, Any]:
    """When and on what a figure was measured: the date, the CPU model and its cores (a figure
    from another day or machine is not comparable without them)."""
    cpu = next((line.partition(":")[2].strip() for line in _cpuinfo().splitlines()
                if line.startswith("model name")), platform.processor() or "unknown")
    return {"date": datetime.date.today().isoformat(), "cpu": cpu, "cores": os.cpu_count()}


def _cpuinfo() -> str:
    try:
        return Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def write_result(result: BenchResult, directory: Path = RESULTS_DIR) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{result.name}.json"
    path.write_text(json.dumps(result.to_dict(), indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return path


def report(result: BenchResult, directory: Path | None = RESULTS_DIR) -> BenchResult:
    """Print the one summary line and write the JSON result into `directory` unless it is None
    (every benchmark's `main`)."""
    verdict = "OK" if result.met else "MISS"
    print(f"{result.name}: {result.summary} [{verdict}]", flush=True)
    if directory is not None:
        write_result(result, directory)
    return result


def bench_parser(doc: str | None) -> argparse.ArgumentParser:
    """The options every benchmark takes. `--quick` is what tests/test_benchmarks_quick.py runs,
    so that a change breaking `make bench` fails `make test`: the same code at small sizes and
    short latencies, in seconds. Its figures measure nothing, so they are not written to
    benchmarks/results/ (which holds the committed figures) unless `--results` names a place."""
    parser = argparse.ArgumentParser(description=(doc or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="small sizes, seconds: checks that the benchmark runs; its figures "
                             "mean nothing and are written only with --results")
    parser.add_argument("--results", type=Path, default=None,
                        help=f"directory for the JSON result (default {RESULTS_DIR}, none "
                             "with --quick)")
    return parser


def results_dir(args: argparse.Namespace) -> Path | None:
    if args.results is not None:
        return Path(args.results)
    return None if args.quick else RESULTS_DIR


def toy_config(**changes: Any) -> Config:
    return Config(seed=0, target_model=TARGET_MODEL, optimizer_model=OPTIMIZER_MODEL).replace(
        **changes
    )


def scripted_backends(optimizer: ToyOptimizer | None = None) -> dict[Role, Backend]:
    return {
        Role.TARGET: FunctionBackend(toy_target, name="toy-target"),
        Role.OPTIMIZER: FunctionBackend(optimizer or ToyOptimizer(), name="toy-optimizer"),
    }


# ---- the toy world behind the fake Anthropic server ------------------------------------------

_DRAFT = re.compile(r"This is draft (\d+) of \d+")


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(b.get("text", "") for b in content if b.get("type") == "text")


def body_to_request(body: Mapping[str, Any], *, target_model: str = TARGET_MODEL) -> Request:
    """Rebuild the `Request` a Messages API body was made from, as far as the toy models need.

    The wire carries neither the call kind nor the draw index: the kind follows from the
    selection and preparation system prompts and the draw from the I3 prompt's "draft k of K" line."""
    system = _text(body.get("system") or "")
    messages = tuple(
        Message(role=m["role"], content=_text(m.get("content", ""))) for m in body["messages"]
    )
    model = str(body.get("model", ""))
    role = Role.TARGET if model == target_model else Role.OPTIMIZER
    if role is Role.TARGET:
        kind = CallKind.TARGET_EXECUTION
    elif system == SELECTION_SYSTEM:
        kind = CallKind.STRATEGY_SELECTION
    elif system == PREPARATION_SYSTEM:
        kind = CallKind.FEEDBACK_PREPARATION
    else:
        kind = CallKind.CANDIDATE_GENERATION
    draft = _DRAFT.search(messages[0].text()) if messages else None
    return Request(role=role, model=model, system=system, messages=messages,
                   max_tokens=int(body.get("max_tokens", 1)), kind=kind,
                   draw=int(draft.group(1)) - 1 if draft else 0)


class ToyResponder:
    """`FakeAnthropicServer(responder=ToyResponder())`: the toy target and optimizer over HTTP."""

    def __init__(self, optimizer: ToyOptimizer | None = None, target_model: str = TARGET_MODEL):
        self.optimizer = optimizer or ToyOptimizer()
        self.target_model = target_model

    def __call__(self, body: Mapping[str, Any]) -> str:
        request = body_to_request(body, target_model=self.target_model)
        model = toy_target if request.role is Role.TARGET else self.optimizer
        return model(request).text


# ---- LLM wrappers ------------------------------------------------------------------------------


@frozen(kw_only=True)
class Wave:
    """One `llm.complete` call: how many requests it carried, how many were paid, how long."""

    requests: int
    misses: int
    seconds: float


class TimedLLM:
    """Times every `complete` call; with a `paid` probe it also counts the misses per call
    (one call that reaches the network is one dependent wave: the core waits for it)."""

    def __init__(self, inner: LLM, paid: Any = None) -> None:
        self.inner = inner
        self._paid = paid
        self.waves: list[Wave] = []

    def complete(self, requests: Sequence[Request]) -> tuple[Response, ...]:
        before = self._paid() if self._paid else 0
        start = time.perf_counter()
        out = self.inner.complete(requests)
        seconds = time.perf_counter() - start
        after = self._paid() if self._paid else len(requests)
        self.waves.append(Wave(requests=len(requests), misses=after - before, seconds=seconds))
        return out

    @property
    def model_seconds(self) -> float:
        return sum(w.seconds for w in self.waves)


class CountingLLM:
    """Counts target requests per (skill, sample), i.e. per (system, user text)."""

    def __init__(self, inner: LLM) -> None:
        self.inner = inner
        self.target_pairs: Counter[tuple[str, str]] = Counter()

    def complete(self, requests: Sequence[Request]) -> tuple[Response, ...]:
        for r in requests:
            if r.role is Role.TARGET:
                self.target_pairs[(r.system, r.user_text())] += 1
        return self.inner.complete(requests)

    @property
    def duplicates(self) -> int:
        return sum(n - 1 for n in self.target_pairs.values() if n > 1)

    @property
    def executions(self) -> int:
        return sum(self.target_pairs.values())


def paid_calls(llm: Any) -> int:
    return llm.accounting().total().paid_calls
