"""Properties of the prompt budget: `fit` stays within the budget whenever dropping can get it
there, drops lower ranks first and keeps items in order; the estimate is near-additive, which
`fit`'s first pass and `clip_to_tokens` rely on; and it gives the same integers as the regular
expressions it was first written with, on any text."""

from __future__ import annotations

import re

from hypothesis import example, given, settings
from hypothesis import strategies as st

from stratune_core.prompts.budget import (
    ASCII_SPACES,
    WIDE_SPACES,
    Part,
    clip_to_tokens,
    estimate_tokens,
    fit,
)

_WORD = re.compile(r"[A-Za-z]+")
_SYMBOL = re.compile(r"[!-/0-9:-@\[-`{-~]")
_LOOSE_SPACE = re.compile(r"\s{2,}|\s(?![A-Za-z])")
_CAPITALS = re.compile(r"[A-Z]{2,}")
_NON_ASCII = re.compile(r"[^\x00-\x7f]")


def regex_estimate(text: str) -> int:
    """`estimate_tokens` as it was written first (prompt versions up to 5 were built with it)."""
    words = _WORD.findall(text)
    return (
        len(words)
        + sum(len(w) for w in words) // 8
        + sum(len(c) for c in _CAPITALS.findall(text)) // 3
        + len(_SYMBOL.findall(text))
        + len(_LOOSE_SPACE.findall(text))
        + 2 * len(_NON_ASCII.findall(text))
    )

ALPHABET = "abcXYZ 019.,:-\n\t<>/é€漢"
texts = st.text(ALPHABET, max_size=80)


@st.composite
def parts(draw) -> list[Part]:
    n = draw(st.integers(1, 5))
    return [
        Part(text=draw(texts), items=draw(st.lists(texts.filter(bool), max_size=6)),
             keep=draw(st.integers(0, 3)), rank=draw(st.integers(0, 3)), name=f"part{i}",
             oldest_first=draw(st.booleans()))
        for i in range(n)
    ]


def _left(parts_: list[Part], text: str, k: int) -> list[str]:
    """The items of part k still in the prompt (items are distinct by construction below)."""
    return [i for i in parts_[k].items if i in text]


@settings(max_examples=300, deadline=None)
@given(parts(), st.integers(1, 400))
def test_fit_holds_the_budget_or_has_nothing_left_to_drop(ps, budget):
    ps = [Part(text=p.text, items=[f"<{k}.{j}> {x}" for j, x in enumerate(p.items)], keep=p.keep,
               rank=p.rank, name=p.name, oldest_first=p.oldest_first) for k, p in enumerate(ps)]
    fitted = fit(ps, budget)
    assert fitted.tokens == estimate_tokens(fitted.text)
    left = [_left(ps, fitted.text, k) for k in range(len(ps))]
    if fitted.tokens > budget:
        assert all(len(left[k]) <= min(p.keep, 1, len(p.items)) for k, p in enumerate(ps))
    for k, p in enumerate(ps):
        n = len(left[k])
        expected = list(p.items[len(p.items) - n:]) if p.oldest_first else list(p.items[:n])
        assert left[k] == expected  # the oldest go first, or the last ones
        if n < len(p.items):
            assert f"{len(p.items) - n} {p.name}" in fitted.text.splitlines()[0]
            for a, q in enumerate(ps):  # every lower rank was down to what it keeps
                if q.rank < p.rank:
                    assert len(left[a]) <= q.keep
    if all(len(left[k]) == len(p.items) for k, p in enumerate(ps)):
        assert not fitted.text.startswith("Note:") and fitted.dropped == ()


@settings(max_examples=300, deadline=None)
@given(texts, texts)
def test_the_estimate_is_near_additive(a, b):
    assert estimate_tokens(a + b) <= estimate_tokens(a) + estimate_tokens(b) + 2
    assert estimate_tokens(a) <= estimate_tokens(a + b) + 2


@settings(max_examples=300, deadline=None)
@given(st.text(ALPHABET, max_size=400), st.integers(8, 200))
def test_clip_to_tokens_fits_and_keeps_a_head(text, tokens):
    clipped = clip_to_tokens(text, tokens)
    assert estimate_tokens(clipped) <= tokens
    assert clipped == text or text.startswith(clipped.removesuffix(" …(clipped)"))


# the characters each class of the estimate turns on, next to letters and spaces of every kind
EDGES = ("aZ  AB\t\n\x0b\x1c\x1f\x85\xa0\u1680\u2000\u200a\u200b\u2028\u3000\ufeffé漢"
         "\ud800\U0001f600.,1{~\x00\x7f\x80")


@settings(max_examples=1000, deadline=None)
@given(st.one_of(st.text(), st.text(EDGES), st.text(ALPHABET)))
@example("")
@example("\xa0")  # a text whose only non-ASCII characters are wide spaces
@example("AB C DEF  g \u3000h")
def test_the_estimate_is_the_regex_estimate(text):
    assert estimate_tokens(text) == regex_estimate(text)


def test_the_white_space_classes_are_what_re_calls_white_space():
    space = re.compile(r"\s")
    matched = [chr(c) for c in range(0x110000) if space.match(chr(c))]
    assert matched == [chr(c) for c in ASCII_SPACES] + list(WIDE_SPACES)
