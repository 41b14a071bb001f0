"""ANLS's edit distance (bit-parallel) equals the dynamic-programming table it replaced, on any
pair of strings: it decides scores, so every recorded trace's events depend on it."""

from __future__ import annotations

import itertools

from hypothesis import example, given, settings
from hypothesis import strategies as st

from stratune_core.tasks.anls import levenshtein


def table_distance(a: str, b: str) -> int:
    """The edit distance as `anls.levenshtein` computed it first: the table, row by row."""
    if len(a) < len(b):
        a, b = b, a
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, start=1):
        current = [i]
        for j, cb in enumerate(b, start=1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


# few distinct characters make repeats, shared ends and long runs of matches likely
near = st.text("abé漢 ", max_size=120)


@settings(max_examples=500, deadline=None)
@given(st.one_of(st.tuples(near, near), st.tuples(st.text(), st.text())))
@example(("kitten", "sitting"))
@example(("a" * 70 + "b", "b" + "a" * 70))  # more than 64 positions: one integer, many words
def test_the_distance_is_the_tables(pair):
    a, b = pair
    assert levenshtein(a, b) == table_distance(a, b) == levenshtein(b, a)


def test_every_short_pair_over_three_letters():
    words = [("".join(w)) for n in range(6) for w in itertools.product("abc", repeat=n)]
    for a, b in itertools.product(words, words[:121]):
        assert levenshtein(a, b) == table_distance(a, b)
