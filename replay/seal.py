"""The end-of-run seal: digests of the manifest and of the files the replay cannot recompute
whole, recorded in the manifest when a run finishes (`Manifest.seal`).

`stratune replay` recomputes the events, the skill texts, the final skill, the token counts of
usage.json and the test scores; the seal covers the rest of what `view`, `compare` and
`evaluate` read: the manifest's other fields (models, profile, config values that recompute to
the same events, git revision), usage.json's costs, evaluation.json as written, the batch
journal, a grid cell's coordinates, and the event log's exact bytes. A file it names must
hold the same bytes; a file it could have named but does not must not exist.

`view` and `compare` check the seal alone (it is cheap) and mark each run: sealed and intact,
altered, or never sealed (unfinished, or recorded before seals existed).
"""

from __future__ import annotations

import enum
import json
from pathlib import Path

import attrs
import xxhash
from attrs import frozen

from llm_cache.batch_journal import JOURNAL_NAME
from replay.serde import FileDigest, Manifest, Seal, canonical_json, manifest_to_json
from replay.trace import CELL_FILE, EVALUATION, EVENTS, FINAL_SKILL, USAGE, RunDir

SEALED = (EVENTS, USAGE, EVALUATION, FINAL_SKILL, JOURNAL_NAME, CELL_FILE)
SEAL_KEY = "seal"


def _digest(data: bytes) -> str:
    return xxhash.xxh3_128_hexdigest(data)


def _manifest_digest(data: dict) -> str:
    unsealed = {k: v for k, v in data.items() if k != SEAL_KEY}
    return _digest(canonical_json(unsealed).encode("utf-8"))


def sealed(run_dir: RunDir, manifest: Manifest) -> Manifest:
    """`manifest` with the seal of the directory's files as they are now."""
    unsealed = attrs.evolve(manifest, seal=None)
    files = tuple(FileDigest(name=name, digest=_digest((run_dir.path / name).read_bytes()))
                  for name in SEALED if (run_dir.path / name).is_file())
    data = json.loads(manifest_to_json(unsealed))
    return attrs.evolve(manifest, seal=Seal(manifest=_manifest_digest(data), files=files))


def seal_finished(run_dir: RunDir) -> None:
    """Seal the finished run in `run_dir` (unless its seal already holds these very bytes)."""
    manifest = run_dir.read_manifest()
    new = sealed(run_dir, manifest)
    if new != manifest:
        run_dir.write_manifest(new)


def check(run_dir: RunDir) -> str | None:
    """None when the seal holds (or there is none: see `status`), else one line naming the
    first file that differs from it."""
    path = run_dir.manifest
    manifest = run_dir.read_manifest()
    data = json.loads(path.read_text(encoding="utf-8"))
    seal = manifest.seal
    if seal is None:
        return _unsealed(run_dir, manifest, data)
    if _manifest_digest(data) != seal.manifest:
        return f"{path}: edited after the run finished (it no longer matches its seal)"
    named = {f.name: f.digest for f in seal.files}
    for name in SEALED:
        file = run_dir.path / name
        if name not in named:
            if file.is_file():
                return f"{file}: put there after the run finished (its seal has no such file)"
            continue
        if not file.is_file():
            return f"{file}: missing; the run's seal records it"
        if _digest(file.read_bytes()) != named[name]:
            return f"{file}: edited after the run finished (its bytes differ from the seal)"
    return None


def _unsealed(run_dir: RunDir, manifest: Manifest, data: dict) -> str | None:
    """A finished run written by a version that seals (its manifest has the key) and holds no
    seal: stopped between finishing and sealing, or its seal was taken out."""
    if not (manifest.finished and SEAL_KEY in data):
        return None
    return (f"{run_dir.manifest}: the run finished but is not sealed (stopped before it was "
            "sealed, or its seal was removed); run the same `stratune train` command to seal it")


class Integrity(enum.Enum):
    INTACT = "intact"
    ALTERED = "altered"
    UNSEALED = "unsealed"


@frozen(kw_only=True)
class Status:
    integrity: Integrity
    detail: str

    @property
    def mark(self) -> str:
        """A short label for tables."""
        return {Integrity.INTACT: "sealed", Integrity.ALTERED: "ALTERED",
                Integrity.UNSEALED: "unchecked"}[self.integrity]


def status(path: str | Path) -> Status:
    """What `view` and `compare` say about a run directory's files."""
    run_dir = RunDir.at(path)
    manifest = run_dir.read_manifest()
    problem = check(run_dir)
    if manifest.seal is None:
        why = ("the run has not finished" if not manifest.finished
               else "finished but not sealed" if problem is not None
               else "recorded before runs were sealed")
        return Status(integrity=Integrity.UNSEALED,
                      detail=f"never checked: {why}; `stratune replay {path}` recomputes it")
    if problem is not None:
        return Status(integrity=Integrity.ALTERED, detail=f"FAILED: {problem}")
    return Status(integrity=Integrity.INTACT,
                  detail="files match the seal recorded when the run finished")
