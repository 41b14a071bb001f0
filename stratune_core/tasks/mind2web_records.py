"""Mind2Web records and their parser from the official JSON schema (docs/design.md, "Tasks").

`parse_record(obj, where=...)` turns one decoded task record into a `Mind2WebItem` or raises
a `TaskDataError` naming `where` (file and line) and the field. Train records carry no
`scoreable` key: a step is scoreable when it has candidates and is not `forced_gold`.
"""

from __future__ import annotations

from typing import Any

from attrs import field, frozen

from stratune_core.records.errors import TaskDataError

OPS = ("CLICK", "TYPE", "SELECT")
N_CANDIDATES = 20


@frozen(kw_only=True)
class Candidate:
    id: str
    tag: str = ""
    text: str = ""
    extra: str = ""


@frozen(kw_only=True)
class Step:
    i: int
    op: str
    value: str = ""
    gold_ids: tuple[str, ...] = field(default=(), converter=tuple)
    candidates: tuple[Candidate, ...] = field(default=(), converter=tuple)
    scoreable: bool = True


@frozen(kw_only=True)
class Mind2WebItem:
    annotation_id: str
    task: str
    website: str
    domain: str = ""
    subdomain: str = ""
    action_reprs: tuple[str, ...] = field(default=(), converter=tuple)
    steps: tuple[Step, ...] = field(default=(), converter=tuple)


def _get(obj: Any, key: str, kind: type | tuple[type, ...], where: str, path: str) -> Any:
    if not isinstance(obj, dict):
        raise TaskDataError(f"{where}: field {path or 'record'}: expected an object")
    if key not in obj:
        raise TaskDataError(f"{where}: field {path}{key}: missing")
    value = obj[key]
    if not isinstance(value, kind):
        names = kind.__name__ if isinstance(kind, type) else "/".join(k.__name__ for k in kind)
        raise TaskDataError(
            f"{where}: field {path}{key}: expected {names}, got {type(value).__name__}"
        )
    return value


def _candidate(obj: Any, where: str, path: str) -> Candidate:
    return Candidate(
        id=str(_get(obj, "id", (str, int), where, path)),
        tag=str(obj.get("tag", "")),
        text=str(obj.get("text", "")),
        extra=str(obj.get("extra", "")),
    )


def _step(obj: Any, where: str, path: str, n_actions: int, strict_count: bool) -> Step:
    i = _get(obj, "i", int, where, path)
    if not 0 <= i < n_actions:
        raise TaskDataError(f"{where}: field {path}i: {i} is outside action_reprs (0..{n_actions - 1})")
    op = _get(obj, "op", str, where, path).upper()
    if op not in OPS:
        raise TaskDataError(f"{where}: field {path}op: unknown operation {op!r}; use {', '.join(OPS)}")
    gold = tuple(str(g) for g in _get(obj, "gold_ids", list, where, path))
    raw = _get(obj, "candidates", list, where, path)
    candidates = tuple(_candidate(c, where, f"{path}candidates[{k}].") for k, c in enumerate(raw))
    forced = bool(obj.get("forced_gold", False))
    scoreable = bool(obj.get("scoreable", True)) and not forced and bool(candidates) and bool(gold)
    if scoreable and strict_count and len(candidates) != N_CANDIDATES:
        raise TaskDataError(
            f"{where}: field {path}candidates: expected {N_CANDIDATES} candidates, got {len(candidates)}"
        )
    return Step(
        i=i,
        op=op,
        value=str(obj.get("value") or ""),
        gold_ids=gold,
        candidates=candidates,
        scoreable=scoreable,
    )


def parse_record(obj: Any, *, where: str, strict_count: bool = True) -> Mind2WebItem:
    """One task record; `strict_count` demands 20 candidates per scoreable step."""
    reprs = _get(obj, "action_reprs", list, where, "")
    steps = _get(obj, "steps", list, where, "")
    if not steps:
        raise TaskDataError(f"{where}: field steps: empty; a task needs at least one step")
    return Mind2WebItem(
        annotation_id=str(_get(obj, "annotation_id", str, where, "")),
        task=_get(obj, "task", str, where, ""),
        website=_get(obj, "website", str, where, ""),
        domain=str(obj.get("domain", "")),
        subdomain=str(obj.get("subdomain", "")),
        action_reprs=tuple(str(a) for a in reprs),
        steps=tuple(
            _step(s, where, f"steps[{k}].", len(reprs), strict_count) for k, s in enumerate(steps)
        ),
    )
