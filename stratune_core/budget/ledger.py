"""The execution ledger: every (skill, sample) executed this run, each at most once
(docs/design.md, "Budget").

The ledger is what makes "compare c with s_t on the same samples" cost one execution per pair:
a repeat is answered from here and costs nothing. It is a frozen value; `add` returns a new one.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from types import MappingProxyType

from attrs import field, frozen

from stratune_core.records.base import Execution
from stratune_core.records.errors import CoreInvariantError

Pair = tuple[str, str]


def _freeze(entries: Mapping[Pair, Execution]) -> Mapping[Pair, Execution]:
    return MappingProxyType(dict(entries))


def _copy(entries: Mapping[Pair, Execution]) -> dict[Pair, Execution]:
    # dict() of a mappingproxy goes key by key through the mapping protocol; the proxy's copy()
    # is the dict's own, a block copy: on a long run (9,000 entries, 75 adds) that was the
    # largest single item of a replay
    return entries.copy() if isinstance(entries, MappingProxyType) else dict(entries)


def _check_keys(_inst: object, _attr: object, entries: Mapping[Pair, Execution]) -> None:
    for key, e in entries.items():
        if key != (e.skill_id, e.sample_id):
            raise CoreInvariantError(
                f"ledger: entry {key!r} holds the execution of {(e.skill_id, e.sample_id)!r}"
            )


@frozen(kw_only=True)
class Ledger:
    """(skill_id, sample_id) -> Execution, with a per-skill index so look-ups are O(result)."""

    entries: Mapping[Pair, Execution] = field(
        factory=dict, converter=_freeze, validator=_check_keys
    )
    _by_skill: Mapping[str, Mapping[str, Execution]] = field(
        init=False, eq=False, repr=False, hash=False
    )

    def __attrs_post_init__(self) -> None:
        index: dict[str, dict[str, Execution]] = {}
        for (skill_id, sample_id), e in self.entries.items():
            index.setdefault(skill_id, {})[sample_id] = e
        object.__setattr__(self, "_by_skill", index)

    @classmethod
    def of(cls, executions: Iterable[Execution]) -> Ledger:
        return cls().add(executions)

    def __len__(self) -> int:
        return len(self.entries)

    def get(self, skill_id: str, sample_id: str) -> Execution | None:
        return self._by_skill.get(skill_id, {}).get(sample_id)

    def has(self, skill_id: str, sample_id: str) -> bool:
        return sample_id in self._by_skill.get(skill_id, {})

    def missing(self, skill_id: str, sample_ids: Iterable[str]) -> tuple[str, ...]:
        """The distinct ids of `sample_ids` not yet executed under `skill_id`, in input order."""
        done = self._by_skill.get(skill_id, {})
        return tuple(dict.fromkeys(sid for sid in sample_ids if sid not in done))

    def scores(self, skill_id: str, sample_ids: Sequence[str]) -> tuple[float, ...]:
        done = self._by_skill.get(skill_id, {})
        out = []
        for sid in sample_ids:
            e = done.get(sid)
            if e is None:
                raise CoreInvariantError(
                    f"ledger: no execution of skill {skill_id} on sample {sid!r}; "
                    "execute the pair before reading its score"
                )
            out.append(e.score)
        return tuple(out)

    def solved_ids(self, skill_id: str) -> frozenset[str]:
        return frozenset(sid for sid, e in self._by_skill.get(skill_id, {}).items() if e.solved)

    def executed_ids(self, skill_id: str) -> frozenset[str]:
        return frozenset(self._by_skill.get(skill_id, {}))

    def executions(self) -> tuple[Execution, ...]:
        """Every execution, in insertion order (the serialized form of the ledger)."""
        return tuple(self.entries.values())

    def add(self, executions: Iterable[Execution]) -> Ledger:
        """A new ledger with `executions` added; a pair already present is a broken invariant."""
        entries = _copy(self.entries)
        index = dict(self._by_skill)
        copied: set[str] = set()
        for e in executions:
            key = (e.skill_id, e.sample_id)
            if key in entries:
                raise CoreInvariantError(
                    f"ledger: skill {e.skill_id} was already executed on sample {e.sample_id!r}; "
                    "a pair is executed at most once per run"
                )
            entries[key] = e
            if e.skill_id not in copied:  # copy-on-write: older ledgers keep their index
                index[e.skill_id] = dict(index.get(e.skill_id, {}))
                copied.add(e.skill_id)
            index[e.skill_id][e.sample_id] = e  # type: ignore[index]
        # Entries already in self were validated when they entered; rebuilding the index and
        # re-checking every key on each add made a long run quadratic.
        grown = object.__new__(Ledger)
        object.__setattr__(grown, "entries", MappingProxyType(entries))
        object.__setattr__(grown, "_by_skill", index)
        return grown
