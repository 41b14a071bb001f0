"""Released code's screening-set bookkeeping (`Config.screen_solved_min`, `max_solved_uses`,
`max_random_uses`, `screen_ready_share`; all off in the paper):

- the solved quota shrinks while few solved samples are known, min(quota, max(6, known // 3)),
  so that solved samples remain for a second (probation) set;
- a sample serves in the solved part of at most 6 screening sets and in the random part of at
  most 3 (`ScreenUsage` counts them), so the same few samples do not decide every candidate;
- a set is ready when each part holds at least 70 % of its quota; a candidate whose set is not
  ready waits for the next round (`round/readiness.py`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

import attrs
from attrs import field, frozen

KNOWN_SHARE = 3  # the solved quota is at most a third of the known solved samples


def solved_quota(quota: int, floor: int | None, known: int) -> int:
    """min(quota, max(floor, known // 3)); `quota` unchanged when `floor` is None."""
    if floor is None:
        return quota
    return min(quota, max(floor, known // KNOWN_SHARE))


def part_ready(drawn: int, quota: int, share: float) -> bool:
    """A part holds at least `share` of its quota (a part with quota 0 is always ready)."""
    return drawn >= math.ceil(share * quota - 1e-9)


@frozen(kw_only=True)
class ScreenUsage:
    """How many screening sets each sample served in, by part."""

    solved: Mapping[str, int] = field(factory=dict)
    random: Mapping[str, int] = field(factory=dict)

    def add(self, solved_part: Iterable[str], random_part: Iterable[str]) -> ScreenUsage:
        solved, random = dict(self.solved), dict(self.random)
        for x in solved_part:
            solved[x] = solved.get(x, 0) + 1
        for x in random_part:
            random[x] = random.get(x, 0) + 1
        return attrs.evolve(self, solved=solved, random=random)

    @staticmethod
    def worn(uses: Mapping[str, int], cap: int | None) -> frozenset[str]:
        """Samples that served `cap` times already (none when there is no cap)."""
        return frozenset() if cap is None else frozenset(x for x, n in uses.items() if n >= cap)
