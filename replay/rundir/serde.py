"""The trace converter: events as tagged JSON lines, skill texts as blobs, the manifest.

Built by the core's `make_converter` with the trace's event union (`round/registry.TraceEvent`:
the core's events and each method's own) tagged under "_type" at construction. A `SkillAdded` line carries `text_blob` (the blob id = the skill id = the content
hash of the text) instead of the text, so each text is stored once. Every line is canonical
JSON (sorted keys, no spaces), which is what the event digest covers.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterable
from typing import Any

import attrs
import cattrs
import xxhash
from attrs import field, frozen
from cattrs.gen import make_dict_unstructure_fn, override
from cattrs.strategies import configure_tagged_union

from llm_cache.model_spec import without_transport
from stratune_core.config.knobs import Config
from stratune_core.config.serde import TAG, make_converter, one_line
from stratune_core.prompts.templates import PROMPT_VERSION
from stratune_core.records.enums import Strategy
from stratune_core.records.errors import StraTuneError
from stratune_core.records.ids import text_id
from stratune_core.records.method_spec import OMIT_IF_DEFAULT, MethodSpec, default_method
from stratune_core.round.registry import TraceEvent, prompt_version_of
from stratune_core.selection.selectors.scripted import ReplaySequence
from stratune_core.state.events import Event, SkillAdded
from stratune_core.tasks.agent import Toolbox

# 2: written by a version that seals every finished run (`replay/rundir/seal.py`): a finished run
# of format 2 without a seal was altered. 1: the same fields; sealed only if it has the key.
FORMAT_VERSION = 2
READABLE_FORMATS = (1, 2)
SEALING_FORMAT = 2
TEXT_BLOB = "text_blob"
LEGACY_PROMPT_VERSION = "1"  # manifests written before the field existed
# Config fields whose absence means "off", with their off value
RULES_ADDED_LATER = {"max_unusable_rounds": None, "screen_split_room": False,
                     "rest_refused_form": False}


class TraceError(StraTuneError):
    """A trace file is missing, malformed or does not match its manifest."""


@functools.cache
def trace_converter() -> cattrs.Converter:
    """Built on first use (importing this module builds nothing), then only read. A task
    spec without a skill folder is written without the key, as before the key existed."""
    converter = make_converter(tagged_unions=(TraceEvent, MethodSpec))
    converter.register_unstructure_hook(TaskSpec, make_dict_unstructure_fn(
        TaskSpec, converter, skill=override(omit_if_default=True),
        skill_parts=override(omit_if_default=True), tools=override(omit_if_default=True),
        max_turns=override(omit_if_default=True), kind=override(omit_if_default=True)))
    for spec, later in OMIT_IF_DEFAULT.items():  # a method's field added later: only when set
        converter.register_unstructure_hook(spec, make_dict_unstructure_fn(
            spec, converter, **{name: override(omit_if_default=True) for name in later}))
    configure_tagged_union(MethodSpec, converter, tag_name=TAG)  # again: it took the old hook
    # a run without tools is written without the key, as before agent episodes existed; built
    # last, since a generated hook takes its fields' hooks (the method union's) as they are now
    converter.register_unstructure_hook(Manifest, make_dict_unstructure_fn(
        Manifest, converter, toolbox=override(omit_if_default=True)))
    return converter


def canonical_json(data: Any) -> str:
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


# ---- events -------------------------------------------------------------------------------


def event_to_data(event: Event) -> dict[str, Any]:
    """The JSON-ready dict of one event, skill texts replaced by their blob id."""
    data = trace_converter().unstructure(event, TraceEvent)
    if isinstance(event, SkillAdded):
        data.pop("text")
        data[TEXT_BLOB] = event.skill_id
    return data


def event_to_line(event: Event) -> str:
    return canonical_json(event_to_data(event))


def event_from_line(
    line: str, read_blob: Callable[[str], str], *, where: str = "events.jsonl"
) -> Event:
    """Parse one line; `read_blob(id)` returns a skill text. Errors name `where` and the field."""
    data = _json_object(line, where, note="; the trace is damaged")
    if data.get("_type") == "SkillAdded" and TEXT_BLOB in data:
        blob = data.pop(TEXT_BLOB)
        data["text"] = read_blob(str(blob))
    try:
        return trace_converter().structure(data, TraceEvent)
    except Exception as exc:  # cattrs raises several error types; all become one line
        raise TraceError(f"{where}: {one_line(exc)}") from None


def _json_object(text: str, where: str, *, note: str = "") -> dict[str, Any]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        line = f" line {exc.lineno}:" if "\n" in text.strip() else ""
        raise TraceError(f"{where}:{line} not JSON ({exc.msg}){note}") from None
    if not isinstance(data, dict):
        raise TraceError(f"{where}: expected a JSON object, got {type(data).__name__}")
    return data


# ---- digest -------------------------------------------------------------------------------


class Digest:
    """xxh3_128 over the canonical event lines, each followed by a newline."""

    def __init__(self) -> None:
        self._h = xxhash.xxh3_128()
        self.count = 0

    def add(self, line: str) -> None:
        self._h.update(line.encode("utf-8") + b"\n")
        self.count += 1

    def hexdigest(self) -> str:
        return self._h.hexdigest()


def digest_of(lines: Iterable[str]) -> str:
    d = Digest()
    for line in lines:
        d.add(line)
    return d.hexdigest()


def check_blob(blob_id: str, text: str, *, where: str) -> str:
    if text_id(text) != blob_id:
        raise TraceError(f"{where}: content does not hash to its name; the blob was edited")
    return text


# ---- manifest -----------------------------------------------------------------------------


@frozen(kw_only=True)
class TaskSpec:
    """How the task was loaded (the arguments of `replay.tasks.registry.load_task`)."""

    spec: str
    scorer: str | None = None
    placement: str = "system"
    limit: int | None = None
    # An Agent Skills folder whose SKILL.md body replaces the task's initial skill (`--skill`)
    skill: str | None = None
    # what of that folder is learnt beside the body (`--skill-parts`: description, references)
    skill_parts: tuple[str, ...] = field(default=(), converter=tuple)
    # An agent task's tools (`--tools`: module:attr, python, bash) and its turn limit
    tools: tuple[str, ...] = field(default=(), converter=tuple)
    max_turns: int | None = None
    # The target kind when it is not a model's own call (`claude-code`: a harness episode)
    kind: str | None = None


@frozen(kw_only=True)
class Package:
    name: str
    version: str


@frozen(kw_only=True)
class ReplayOrigin:
    """A Replay run's source: the run whose strategy sequence it follows, and the seeds the
    batch orders of both were dealt with (paper §4.1: the same sequence on batches in another
    order; equal seeds mean the same batches, and a row that measures nothing)."""

    run: str
    recorded_batch_order: int
    batch_order: int

    @property
    def same_batches(self) -> bool:
        return self.recorded_batch_order == self.batch_order


@frozen(kw_only=True)
class FileDigest:
    name: str  # a file of the run directory, relative to it
    digest: str  # xxh3_128 of its bytes


def _optional_tuple(value: Any) -> tuple[Any, ...] | None:
    return None if value is None else tuple(value)


@frozen(kw_only=True)
class Seal:
    """Digests recorded when a run finishes: of the manifest itself (without its seal) and of
    each file `view`, `compare` and `evaluate` read that the replay cannot recompute whole
    (costs, the batch journal, the grid coordinates, the raw bytes of the event log)."""

    manifest: str
    files: tuple[FileDigest, ...] = field(default=(), converter=tuple)
    # Every entry of the learned Agent Skills folder (OUT/skill/), directories and links
    # included; empty when there is none. None: sealed before the folder was covered.
    skill_folder: tuple[FileDigest, ...] | None = field(default=None, converter=_optional_tuple)


@frozen(kw_only=True)
class Manifest:
    format: int = FORMAT_VERSION
    task: TaskSpec
    target: str  # model spec strings as given on the command line
    optimizer: str
    seed: int
    profile: str = "paper"
    config: Config
    # The training method and its settings; absent in manifests written before the baselines
    # existed, which are StraTune runs.
    method: MethodSpec = field(factory=default_method)
    # The version of the method's prompts the run was made with (`round/registry.prompt_version_of`).
    prompt_version: str = PROMPT_VERSION
    # A `replay:` selector's recorded sequence by round (null: no strategy recorded in that
    # round); the config keeps only the selector's spelling.
    replay_sequence: tuple[Strategy | None, ...] = field(default=(), converter=tuple)
    replay_of: ReplayOrigin | None = None
    packages: tuple[Package, ...] = field(default=(), converter=tuple)
    # an agent task's tools as its requests hold them (specs, fingerprints, the turn limit)
    toolbox: Toolbox | None = None
    git_revision: str | None = None
    events: int = 0
    event_digest: str = ""
    finished: bool = False
    final_id: str | None = None
    seal: Seal | None = None  # None: the run has not finished, or was recorded before seals

    def run_identity(self) -> dict[str, Any]:
        """What must agree for a rerun to be a resume of the same run."""
        data = manifest_to_data(self)
        identity = {k: data[k] for k in ("task", "seed", "config", "method", "replay_sequence",
                                         "prompt_version")}
        identity["toolbox"] = data.get("toolbox")
        # Transport options (timeouts, batch=on, concurrency, ...) may change between sessions.
        identity.update(target=without_transport(self.target),
                        optimizer=without_transport(self.optimizer))
        return identity


def manifest_to_data(manifest: Manifest) -> dict[str, Any]:
    return trace_converter().unstructure(manifest)


def manifest_to_json(manifest: Manifest) -> str:
    return json.dumps(manifest_to_data(manifest), sort_keys=True, indent=2, ensure_ascii=False)


def manifest_from_json(text: str, *, where: str = "manifest.json") -> Manifest:
    data = _json_object(text, where)
    if type(data.get("format")) is not int or data["format"] not in READABLE_FORMATS:
        raise TraceError(
            f"{where}: format {data.get('format')!r} is not one of "
            f"{', '.join(map(str, READABLE_FORMATS))}; record the run again with this version "
            "of stratune"
        )
    data.setdefault("prompt_version", LEGACY_PROMPT_VERSION)
    if isinstance(data.get("config"), dict):
        # a run recorded before a stop rule existed ran without it
        for name, off in RULES_ADDED_LATER.items():
            data["config"].setdefault(name, off)
    try:
        manifest = trace_converter().structure(data, Manifest)
    except Exception as exc:
        raise TraceError(f"{where}: {one_line(exc)}") from None
    selector = manifest.config.selector
    if isinstance(selector, ReplaySequence):  # the recorded sequence rejoins its selector
        selector = attrs.evolve(selector, strategies=manifest.replay_sequence)
        manifest = attrs.evolve(manifest, config=manifest.config.replace(selector=selector))
    return manifest


def check_prompt_version(manifest: Manifest, *, where: str = "manifest.json") -> None:
    """A run recorded with other prompts cannot be replayed: every optimizer call would miss the
    cache. One line naming both versions, instead of a cache miss deep in a round."""
    builds = prompt_version_of(manifest.method)
    if manifest.prompt_version != builds:
        raise TraceError(
            f"{where}: recorded with prompt version {manifest.prompt_version}, but this stratune "
            f"builds prompt version {builds}; its optimizer calls cannot be replayed: "
            "record the run again, or replay it with the stratune version that recorded it"
        )
