"""The end-of-run seal: digests of the manifest and of the files the replay cannot recompute
whole, recorded in the manifest when a run finishes (`Manifest.seal`).

`stratune replay` recomputes the events, the skill texts, the final skill, the token counts of
usage.json and the test scores; the seal covers the rest of what `view`, `compare` and
`evaluate` read: the manifest's other fields (models, profile, config values that recompute to
the same events, git revision), usage.json's costs, evaluation.json as written, the batch
journal, a grid cell's coordinates, the event log's exact bytes, and every entry of the learned
Agent Skills folder (`skill/`: its SKILL.md front matter, its references and scripts, its
folders). A file it names must hold the same bytes; a file it could have named but does not
must not exist.

A run is sealed in the same write that marks it finished (and again after its test
evaluation), so a finished run written by a version that seals (manifest format 2) always has
a seal: a missing one means it was taken out. A rerun of a finished run never seals what it
did not write itself (`rerun_problem`).

`view` and `compare` check the seal alone (it is cheap) and mark each run: sealed and intact,
altered, or never sealed (unfinished, or recorded before seals existed).
"""

from __future__ import annotations

import enum
import json
import os
from collections.abc import Iterator
from pathlib import Path

import attrs
import xxhash
from attrs import frozen

from llm_cache.batch_journal import JOURNAL_NAME
from replay.rundir.pre_seal import events_predate_seals
from replay.rundir.serde import (
    SEALING_FORMAT,
    FileDigest,
    Manifest,
    Seal,
    canonical_json,
    manifest_to_json,
)
from replay.rundir.trace import CELL_FILE, EVALUATION, EVENTS, FINAL_SKILL, MANIFEST, USAGE, RunDir
from replay.skills.agent_skill import OUT_DIR as SKILL_DIR
from stratune_core.records.method_spec import generator_of
from stratune_core.round.registry import entry_of

SEALED = (EVENTS, USAGE, EVALUATION, FINAL_SKILL, JOURNAL_NAME, CELL_FILE)
SEAL_KEY = "seal"
TEST_EVALUATION_FILES = (EVALUATION, USAGE)  # what a test evaluation writes after the seal
FORMAT_KEY = "format"


def _digest(data: bytes) -> str:
    return xxhash.xxh3_128_hexdigest(data)


def _manifest_digest(data: dict) -> str:
    unsealed = {k: v for k, v in data.items() if k != SEAL_KEY}
    return _digest(canonical_json(unsealed).encode("utf-8"))


def skill_folder(run_dir: RunDir) -> tuple[FileDigest, ...]:
    """Every entry under `skill/` (the folder itself first), by path relative to the run:
    a file by its bytes, a link by its target (never followed), a folder as such."""
    root = run_dir.path / SKILL_DIR
    if not (root.exists() or root.is_symlink()):
        return ()
    entries = [FileDigest(name=SKILL_DIR, digest=_entry(root))]
    if root.is_dir() and not root.is_symlink():
        for directory, folders, files in os.walk(root, followlinks=False):
            for name in (*folders, *files):
                path = Path(directory) / name
                entries.append(FileDigest(name=path.relative_to(run_dir.path).as_posix(),
                                          digest=_entry(path)))
    return tuple(sorted(entries, key=lambda e: e.name))


def _entry(path: Path) -> str:
    if path.is_symlink():
        return "link " + _digest(os.fsencode(os.readlink(path)))
    if path.is_dir():
        return "folder"
    if path.is_file():
        return _digest(path.read_bytes())
    return "special"


def sealed(run_dir: RunDir, manifest: Manifest) -> Manifest:
    """`manifest` with the seal of the directory's files as they are now."""
    unsealed = attrs.evolve(manifest, seal=None)
    files = tuple(FileDigest(name=name, digest=_digest((run_dir.path / name).read_bytes()))
                  for name in SEALED if (run_dir.path / name).is_file())
    data = json.loads(manifest_to_json(unsealed))
    return attrs.evolve(manifest, seal=Seal(manifest=_manifest_digest(data), files=files,
                                            skill_folder=skill_folder(run_dir)))


def seal_finished(run_dir: RunDir) -> None:
    """Seal the finished run in `run_dir` (unless its seal already holds these very bytes)."""
    manifest = run_dir.read_manifest()
    new = sealed(run_dir, manifest)
    if new != manifest:
        run_dir.write_manifest(new)


@frozen(kw_only=True)
class Mismatch:
    name: str  # relative to the run directory: manifest.json, usage.json, skill/x/SKILL.md
    problem: str  # one line naming the file
    unsealed: bool = False  # the seal itself is missing (the line says what to do)


def mismatches(run_dir: RunDir) -> Iterator[Mismatch]:
    """Every way the directory differs from its seal (nothing when it holds, or when the run
    is unfinished or was recorded before seals: see `status`)."""
    path = run_dir.manifest
    manifest = run_dir.read_manifest()
    data = json.loads(path.read_text(encoding="utf-8"))
    seal = manifest.seal
    if seal is None:
        problem = _unsealed(run_dir, manifest, data)
        if problem is not None:
            yield Mismatch(name=MANIFEST, problem=problem, unsealed=True)
        return
    if _manifest_digest(data) != seal.manifest:
        yield Mismatch(name=MANIFEST, problem=f"{path}: edited after the run finished (it no "
                                              "longer matches its seal)")
    named = {f.name: f.digest for f in seal.files}
    for name in SEALED:
        file = run_dir.path / name
        problem = _compare(file, named.get(name), _digest(file.read_bytes())
                           if file.is_file() else None)
        if problem is not None:
            yield Mismatch(name=name, problem=problem)
    if seal.skill_folder is None:
        if data.get(FORMAT_KEY) == SEALING_FORMAT:  # a version that covers the folder
            yield Mismatch(name=MANIFEST, problem=f"{path}: its seal has no digests of the "
                                                  "skill folder; the seal was edited")
        return  # sealed before the folder was covered
    recorded = {f.name: f.digest for f in seal.skill_folder}
    now = {f.name: f.digest for f in skill_folder(run_dir)}
    for name in sorted(set(recorded) | set(now)):
        problem = _compare(run_dir.path / name, recorded.get(name), now.get(name))
        if problem is not None:
            yield Mismatch(name=name, problem=problem)


def _compare(file: Path, recorded: str | None, now: str | None) -> str | None:
    if recorded == now:
        return None
    if recorded is None:
        return f"{file}: put there after the run finished (its seal has no such file)"
    if now is None:
        return f"{file}: missing; the run's seal records it"
    return f"{file}: edited after the run finished (its bytes differ from the seal)"


def check(run_dir: RunDir) -> str | None:
    """None when the seal holds (or there is none: see `status`), else one line naming the
    first file that differs from it."""
    return next((m.problem for m in mismatches(run_dir)), None)


# StraTune's prompt versions that existed before runs were sealed; every baseline, hybrid, agent
# task and skill folder came later (and the replay refuses a run whose prompt version is not
# the one this stratune builds).
PRE_SEAL_PROMPT_VERSIONS = frozenset({"1", "2", "3"})


def predates_seals(run_dir: RunDir, manifest: Manifest) -> bool:
    """Whether the run's own content allows a version from before seals to have written it:
    its event log first (`pre_seal`: the replay recomputes it), then what the manifest says it
    was made with. Never its `format`."""
    method = manifest.method
    return (not entry_of(method).baseline and generator_of(method) is None
            and manifest.prompt_version in PRE_SEAL_PROMPT_VERSIONS
            and manifest.toolbox is None and manifest.task.skill is None
            and manifest.task.kind is None and events_predate_seals(run_dir.events))


def _unsealed(run_dir: RunDir, manifest: Manifest, data: dict) -> str | None:
    """A finished run without a seal that a version that seals wrote (its content says so:
    `predates_seals`; a manifest of format 2 or with the key says so too): its seal was taken
    out (a finished run is sealed in the write that finishes it)."""
    sealing = (data.get(FORMAT_KEY) == SEALING_FORMAT or SEAL_KEY in data
               or not predates_seals(run_dir, manifest))
    if not (manifest.finished and sealing):
        return None
    return (f"{run_dir.manifest}: the run finished but is not sealed (its seal was removed, "
            "or it stopped before it was sealed: its events show a version that seals wrote "
            "it, whatever its \"format\" says); `stratune replay` recomputes what it can, a "
            "rerun does not seal it: record the run again under another --out")


def rerun_problem(run_dir: RunDir, rewritten: frozenset[str]) -> str | None:
    """Before a rerun of a finished run: None when every file it will not rewrite itself
    (`rewritten`) still matches the seal, else one line naming the first that does not. A
    stop between a test evaluation and its seal leaves evaluation.json and usage.json newer
    than the seal: a rerun with the test evaluation writes both again. Only such a stop: a
    usage.json that differs while evaluation.json still matches the seal was edited (the test
    evaluation writes evaluation.json first), and the rerun would seal its own figures over it."""
    found = list(mismatches(run_dir))
    stopped_in_test = any(m.name == EVALUATION for m in found)
    for mismatch in found:
        if mismatch.unsealed:
            return mismatch.problem
        if mismatch.name not in rewritten or not stopped_in_test:
            stopped = (" (a stop during the test evaluation leaves it so: add --test-eval)"
                       if mismatch.name in TEST_EVALUATION_FILES and stopped_in_test
                       and not rewritten else "")
            return (f"{mismatch.problem}{stopped}; a rerun does not seal files edited after "
                    "the run finished: restore it, or record the run again under another --out")
    return None


def fingerprint(run_dir: RunDir) -> dict[str, str]:
    """The digest of each file a seal can cover and of the manifest, as they are now (a rerun
    compares them before and after to say what it rewrote)."""
    names = (MANIFEST, *SEALED)
    prints = {name: _digest((run_dir.path / name).read_bytes())
              for name in names if (run_dir.path / name).is_file()}
    prints.update({f.name: f.digest for f in skill_folder(run_dir)})
    return prints


def rewritten(before: dict[str, str], after: dict[str, str]) -> list[str]:
    """The files a rerun wrote anew, added or removed, in order."""
    return sorted(name for name in set(before) | set(after) if before.get(name) != after.get(name))


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
    if problem is not None:
        return Status(integrity=Integrity.ALTERED, detail=f"FAILED: {problem}")
    if manifest.seal is None:
        why = ("the run has not finished" if not manifest.finished
               else "recorded before runs were sealed")
        return Status(integrity=Integrity.UNSEALED,
                      detail=f"never checked: {why}; `stratune replay {path}` recomputes it")
    return Status(integrity=Integrity.INTACT,
                  detail="files match the seal recorded when the run finished")
