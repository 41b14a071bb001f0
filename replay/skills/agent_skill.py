"""Agent Skills folders in and out: a folder holding `SKILL.md`, whose YAML front matter names
the skill and says when to use it, and whose Markdown body is the skill text.

Reading checks the front matter against the published Agent Skills format: `name` (1-64
lower-case letters, digits and single hyphens, not at either end, equal to the folder's name),
`description` (1-1024 characters), and where present `license` (text), `compatibility` (1-500
characters), `metadata` (a map of text to text) and `allowed-tools` (space-separated text).
Other keys are kept as they are. The front matter's text and the folder's other files are
carried over to the learned skill unchanged; only the body is replaced.
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs
import yaml
from attrs import frozen

from replay.input_files import (
    number_too_long,
    read_regular,
    refuse_surrogates,
    too_many_digits,
)
from replay.skills.folder_entries import check_entries
from stratune_core.records.base import TaskInfo
from stratune_core.records.errors import ConfigError, StraTuneError
from stratune_core.records.task import Task

SKILL_FILE = "SKILL.md"
NAME_MAX = 64
DESCRIPTION_MAX = 1024
COMPATIBILITY_MAX = 500
# The body goes into every target prompt and into each optimizer prompt beside its feedback;
# the format recommends under 5,000 tokens; 200,000 characters (some 50,000 tokens) is far
# past any skill a model follows, and a sign that reference files were pasted in.
BODY_MAX_CHARS = 200_000
FENCE = "---"
OUT_DIR = "skill"  # in a run directory: skill/<name>/SKILL.md beside final_skill.txt


class SkillFolderError(ConfigError):
    """An Agent Skills folder that cannot be read; the message names the file and the field."""


@frozen(kw_only=True)
class AgentSkill:
    folder: Path
    name: str
    description: str
    front_matter: str  # the YAML text between the fences, byte for byte
    body: str  # the skill text: the Markdown below the front matter, stripped

    @property
    def path(self) -> Path:
        return self.folder / SKILL_FILE


def is_skill_folder(path: str | Path) -> bool:
    """A directory holding SKILL.md (or SKILL.md itself)."""
    given = Path(path).expanduser()
    return (given / SKILL_FILE).is_file() or (given.name == SKILL_FILE and given.is_file())


def read_skill_folder(path: str | Path) -> AgentSkill:
    given = Path(path).expanduser()
    folder = given.parent if given.name == SKILL_FILE and given.is_file() else given
    if not folder.is_dir():
        raise SkillFolderError(f"{folder}: not a folder; give the Agent Skills folder that "
                               f"holds {SKILL_FILE}")
    file = folder / SKILL_FILE
    if not file.is_file():
        raise SkillFolderError(f"{file}: not found; an Agent Skills folder holds {SKILL_FILE} "
                               "(YAML front matter with name and description, then the skill)")
    data = read_regular(file, "skill file")
    try:
        text = data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        raise SkillFolderError(f"{file}:{line}: not UTF-8 text; save the file as UTF-8") from None
    front, body = _split(text, file)
    fields = _parse(front, file)
    name = _name(fields, file, folder.resolve().name)
    description = _text_field(fields, "description", file, DESCRIPTION_MAX, required=True)
    assert description is not None
    _check_optional(fields, file)
    body = body.strip()
    if not body:
        raise SkillFolderError(f"{file}: body: empty; write the skill's instructions below the "
                               "front matter")
    refuse_oversized(body, f"{file}: body", SkillFolderError)
    if "\x00" in body:
        raise SkillFolderError(f"{file}: body: holds NUL bytes, not text")
    check_entries(folder, SkillFolderError)
    return AgentSkill(folder=folder, name=name, description=description, front_matter=front,
                      body=body)


def refuse_oversized(skill: str, where: str,
                     error: type[StraTuneError] = ConfigError) -> None:
    """Every initial skill (a SKILL.md body, initial_skill.txt, `initial_skill=`) has the one
    limit BODY_MAX_CHARS."""
    if len(skill.strip()) > BODY_MAX_CHARS:
        raise error(f"{where}: {len(skill.strip()):,} characters, over the limit of "
                    f"{BODY_MAX_CHARS:,} for a skill; move reference material into other files "
                    "(an Agent Skills folder's references)")


def _split(text: str, file: Path) -> tuple[str, str]:
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].rstrip() != FENCE:
        raise SkillFolderError(f"{file}:1: front matter: missing; start the file with a line "
                               f"'{FENCE}', the fields name: and description:, and a closing "
                               f"'{FENCE}'")
    for i, line in enumerate(lines[1:], start=1):
        if line.rstrip() == FENCE:
            return "".join(lines[1:i]), "".join(lines[i + 1:])
    raise SkillFolderError(f"{file}: front matter: no closing '{FENCE}' line; end the YAML "
                           f"block with a line '{FENCE}'")


class _UniqueKeys(yaml.SafeLoader):
    """YAML keeps the last of two equal keys; a front matter that sets one twice is refused
    with the line of the second."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)  # type: ignore[no-untyped-call]
            if key in seen:
                raise _Duplicate(str(key), key_node.start_mark.line)
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


class _Duplicate(Exception):
    def __init__(self, key: str, line: int) -> None:
        super().__init__(key)
        self.key = key
        self.line = line


def _parse(front: str, file: Path) -> dict[str, object]:
    try:
        fields = yaml.load(front, Loader=_UniqueKeys)  # noqa: S506 (a SafeLoader)
    except _Duplicate as exc:
        raise SkillFolderError(f"{file}:{exc.line + 2}: front matter: {exc.key!r} is given "
                               "twice; keep one") from None
    except RecursionError:
        raise SkillFolderError(f"{file}: front matter: nested too deeply to read; flatten "
                               "it") from None
    except ValueError as exc:
        if too_many_digits(exc):
            raise number_too_long(f"{file}: front matter", SkillFolderError) from None
        raise
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f":{mark.line + 2}" if mark is not None else ""  # +1 for the fence, +1 1-based
        problem = getattr(exc, "problem", None) or "not YAML"
        raise SkillFolderError(f"{file}{line}: front matter: does not parse as YAML "
                               f"({problem}); quote values holding ': ' or '#'") from None
    refuse_surrogates(fields, f"{file}: front matter", SkillFolderError)
    if not isinstance(fields, dict):
        raise SkillFolderError(f"{file}: front matter: expected YAML fields (name: ..., "
                               f"description: ...), got {type(fields).__name__}")
    return {str(k): v for k, v in fields.items()}


NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-")  # the format's: ASCII only


def _line_of(file: Path, key: str) -> int:
    """The 1-based line of the front matter's `key:` in `file` (1 when not found)."""
    try:
        lines = file.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return 1
    return next((i for i, line in enumerate(lines, start=1)
                 if line.lstrip("\ufeff").startswith(f"{key}:")), 1)


def _name(fields: dict[str, object], file: Path, folder_name: str) -> str:
    name = _text_field(fields, "name", file, NAME_MAX, required=True)
    assert name is not None
    bad = next((c for c in name if c not in NAME_CHARS), None)
    if bad is not None:
        raise SkillFolderError(f"{file}:{_line_of(file, 'name')}: field 'name': {name!r} holds "
                               f"{bad!r}; use lower-case ASCII letters, digits and hyphens")
    if name.startswith("-") or name.endswith("-") or "--" in name:
        raise SkillFolderError(f"{file}: field 'name': {name!r}: hyphens go between letters or "
                               "digits, one at a time")
    if name != folder_name:
        raise SkillFolderError(f"{file}: field 'name': {name!r} differs from the folder's name "
                               f"{folder_name!r}; rename one to match the other")
    return name


def _text_field(fields: dict[str, object], key: str, file: Path, limit: int | None, *,
                required: bool = False) -> str | None:
    if key not in fields or fields[key] is None:
        if required:
            raise SkillFolderError(f"{file}: field {key!r}: missing; add it to the front matter")
        return None
    value = fields[key]
    if not isinstance(value, str):
        raise SkillFolderError(f"{file}: field {key!r}: expected text, got "
                               f"{type(value).__name__}; quote the value")
    if not value.strip():
        raise SkillFolderError(f"{file}: field {key!r}: empty")
    if limit is not None and len(value) > limit:
        raise SkillFolderError(f"{file}: field {key!r}: {len(value)} characters, over the "
                               f"limit of {limit}; shorten it")
    return value


def _check_optional(fields: dict[str, object], file: Path) -> None:
    _text_field(fields, "license", file, None)
    _text_field(fields, "compatibility", file, COMPATIBILITY_MAX)
    _text_field(fields, "allowed-tools", file, None)
    metadata = fields.get("metadata")
    if metadata is not None and not (
            isinstance(metadata, dict)
            and all(isinstance(k, str) and isinstance(v, str) for k, v in metadata.items())):
        raise SkillFolderError(f"{file}: field 'metadata': expected a map of text to text; "
                               "quote numbers and dates (version: \"1.0\")")


def skill_markdown(skill: AgentSkill, text: str) -> str:
    """SKILL.md with `text` as its body and the front matter as it was read."""
    return f"{FENCE}\n{skill.front_matter}{FENCE}\n\n{text.strip()}\n"


def learned_folder(skill: str | Path | None, out: str | Path) -> Path | None:
    """Where `train` wrote the learned folder of a run from the skill folder `skill` (before
    sealing the run, so the seal covers it); None when there is none."""
    if skill is None:
        return None
    folder = Path(out) / OUT_DIR / Path(skill).expanduser().resolve().name
    return folder if folder.is_dir() else None


def write_skill_folder(skill: AgentSkill, text: str, parent: str | Path, *,
                       front_matter: str | None = None,
                       files: Mapping[str, str] | None = None) -> Path:
    """`parent/<name>/`: the source folder's other files, copied, and SKILL.md with `text` as
    its body (below `front_matter`, the source's when None); `files` (paths inside the folder)
    replace the copies of those files. Built beside the destination and moved into place, so a
    reader never sees half a folder; an earlier copy is replaced."""
    destination = Path(parent) / skill.name
    building = Path(parent) / f".{skill.name}.partial"
    shutil.rmtree(building, ignore_errors=True)
    building.parent.mkdir(parents=True, exist_ok=True)
    shutil.copytree(skill.folder, building, symlinks=True,
                    ignore=lambda _dir, names: [SKILL_FILE] if _dir == str(skill.folder) else [])
    if front_matter is not None:
        skill = attrs.evolve(skill, front_matter=front_matter)
    (building / SKILL_FILE).write_text(skill_markdown(skill, text), encoding="utf-8")
    for name, content in (files or {}).items():
        path = building / name
        path.parent.mkdir(parents=True, exist_ok=True)  # a script the run added
        path.write_text(content, encoding="utf-8")
        if name.startswith("scripts/"):
            path.chmod(0o755)
    if destination.exists():
        shutil.rmtree(destination)
    building.rename(destination)
    return destination


class WithInitialSkill:
    """`task` with another initial skill; everything else, optional capabilities included,
    is the task's own."""

    def __init__(self, task: Task, skill: str) -> None:
        self._task = task
        self._info = attrs.evolve(task.info, initial_skill=skill)

    @property
    def info(self) -> TaskInfo:
        return self._info

    def __getattr__(self, name: str) -> Any:
        return getattr(self._task, name)
