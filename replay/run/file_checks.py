"""The checks of a run directory's stored files against its recomputation, for `stratune
replay` (`replay/run/verify.py`): each returns None, or one line naming the first mismatch."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from llm_cache.accounting import Accounting
from llm_cache.records import CallKind
from replay.models import specs as models
from replay.rundir.serde import Manifest, TraceError
from replay.rundir.trace import RunDir

BLOB_SUFFIX = ".txt.gz"


def stored_blobs(run_dir: RunDir) -> str | None:
    if not run_dir.blobs.is_dir():
        return f"{run_dir.blobs}: missing; the trace carries no skill texts"
    for path in sorted(run_dir.blobs.iterdir()):
        if not path.name.endswith(BLOB_SUFFIX):
            return f"{path}: not a skill blob (expected <id>{BLOB_SUFFIX}); remove it"
        try:
            run_dir.read_blob(path.name.removesuffix(BLOB_SUFFIX))
        except TraceError as exc:
            return str(exc)
    return None


def added_blobs(run_dir: RunDir, skill_ids: Iterable[str]) -> str | None:
    """Each skill the run added has its blob, and every blob is a skill of the run."""
    wanted = set(skill_ids)
    for skill_id in sorted(wanted):
        if not run_dir.blob(skill_id).is_file():
            return f"{run_dir.blob(skill_id)}: missing; the recomputed run adds skill {skill_id}"
    for path in sorted(run_dir.blobs.iterdir()):
        if path.name.removesuffix(BLOB_SUFFIX) not in wanted:
            return f"{path}: a skill text the recomputed run never adds; it was put there"
    return None


def final_skill(run_dir: RunDir, manifest: Manifest, final_id: str, text: str) -> str | None:
    if manifest.final_id != final_id:
        return (f"{run_dir.manifest}: final_id {manifest.final_id} but the recomputed run ends "
                f"with skill {final_id}")
    path = run_dir.final_skill
    try:
        stored = path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        return f"{path}: missing; the recomputed final skill is {final_id}"
    except UnicodeDecodeError:
        return f"{path}: not UTF-8; it was edited"
    if stored != text:
        line = _first_different_line(stored, text)
        return (f"{path}: differs from the recomputed final skill {final_id} at line {line} "
                "(the file was edited)")
    return None


def _first_different_line(a: str, b: str) -> int:
    left, right = a.split("\n"), b.split("\n")
    for i, (x, y) in enumerate(zip(left, right, strict=False), start=1):
        if x != y:
            return i
    return min(len(left), len(right)) + 1


def usage(run_dir: RunDir, recomputed: Accounting) -> str | None:
    recorded = _read(run_dir, run_dir.usage)
    if recorded is None:
        return f"{run_dir.usage}: missing; a finished run records its usage"
    try:
        rows = {(row["kind"], row["model"]): row for row in recorded["rows"]}
        totals = {key: (int(row["calls"]), _tokens(row["usage"]) + _tokens(row["cached_usage"]))
                  for key, row in rows.items()}
    except (KeyError, TypeError, ValueError, AttributeError):
        return f"{run_dir.usage}: not the usage table stratune writes; it was edited"
    wanted: dict[tuple[str, str], tuple[int, int]] = {}
    for row in recomputed.rows:
        assert row.kind is not None
        if row.kind is CallKind.TEST_EVALUATION and not any(
                kind == row.kind.value for kind, _ in totals):
            continue  # recorded before test-split calls were counted in usage.json
        wanted[(row.kind.value, row.model)] = (row.calls, row.usage.total + row.cached_usage.total)
    for key in sorted(set(wanted) | set(totals)):
        got, want = totals.get(key, (0, 0)), wanted.get(key, (0, 0))
        if got != want:
            return (f"{run_dir.usage}: {key[0]} calls to {key[1]}: recorded {got[0]} calls, "
                    f"{got[1]} tokens; recomputed {want[0]} calls, {want[1]} tokens")
    return None


def _tokens(usage: Mapping[str, Any]) -> int:
    return sum(int(usage[k]) for k in ("input_tokens", "output_tokens", "cache_read_tokens",
                                       "cache_write_tokens"))


def evaluation(run_dir: RunDir, scores: Mapping[str, float], n: int,
               solved: Mapping[str, int] | None = None) -> str | None:
    recorded = _read(run_dir, run_dir.evaluation)
    if recorded is None:
        return None
    try:
        stored = {str(k): float(v) for k, v in recorded["scores"].items()}
        stored_n = int(recorded["n"])
        stored_solved = ({str(k): int(v) for k, v in recorded["solved"].items()}
                         if "solved" in recorded else None)
    except (KeyError, TypeError, ValueError, AttributeError):
        return f"{run_dir.evaluation}: not the evaluation stratune writes; it was edited"
    if stored_n != n:
        return f"{run_dir.evaluation}: n is {stored_n}, the split has {n} samples"
    for skill_id in sorted(set(stored) | set(scores)):
        if stored.get(skill_id) != scores.get(skill_id):
            return (f"{run_dir.evaluation}: score of {skill_id}: recorded "
                    f"{stored.get(skill_id)}, recomputed {scores.get(skill_id)}")
    if solved is not None and stored_solved is not None:  # older files have no solved counts
        for skill_id in sorted(set(stored_solved) | set(solved)):
            if stored_solved.get(skill_id) != solved.get(skill_id):
                return (f"{run_dir.evaluation}: solved count of {skill_id}: recorded "
                        f"{stored_solved.get(skill_id)}, recomputed {solved.get(skill_id)}")
    return None


def event_bytes(run_dir: RunDir) -> str | None:
    """A finished run's log is its canonical lines, each ending in LF, and nothing else."""
    data = run_dir.events.read_bytes() if run_dir.events.is_file() else b""
    if b"\r" in data:  # canonical JSON escapes a CR inside a string: a raw one was added
        line = data.count(b"\n", 0, data.index(b"\r")) + 1
        return (f"{run_dir.events}:{line}: line ends converted to CR LF (or CR); the log is "
                "written with LF alone: check it out again without conversion (git: "
                "core.autocrlf false, or `*.jsonl -text` in .gitattributes)")
    tail = len(data) - (data.rfind(b"\n") + 1)
    if tail:
        return (f"{run_dir.events}: {tail} bytes after the last complete line; a finished "
                "run's log ends with a whole line (a partial line was appended)")
    return None


def model_specs(run_dir: RunDir, manifest: Manifest) -> str | None:
    """The manifest's model specs name the models every recorded call was made to."""
    for role, spec, model in (("target", manifest.target, manifest.config.target_model),
                              ("optimizer", manifest.optimizer, manifest.config.optimizer_model)):
        named = models.canonical_model(spec)
        if named != model:
            return (f"{run_dir.manifest}: {role} {spec!r} is model {named}, but the run's calls "
                    f"went to {model} (the manifest was edited)")
    return None


def _read(run_dir: RunDir, path: Any) -> Any:
    try:
        return run_dir.read_json(path)
    except (TraceError, UnicodeDecodeError):
        return {}
