"""Properties of the prompt budget: `fit` stays within the budget whenever dropping can get it
there, drops lower ranks first and keeps items in order; the estimate is near-additive, which
`fit`'s first pass and `clip_to_tokens` rely on."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from stratune_core.prompts.budget import Part, clip_to_tokens, estimate_tokens, fit

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
