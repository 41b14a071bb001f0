"""ANLS and answer extraction, on hand-checked cases."""

from __future__ import annotations

import pytest

from stratune_core.tasks import anls


def test_levenshtein_hand_checked() -> None:
    """Classic distances: kitten/sitting is 3, empty to abc is 3."""
    assert anls.levenshtein("kitten", "sitting") == 3
    assert anls.levenshtein("", "abc") == 3
    assert anls.levenshtein("abc", "abc") == 0


def test_case_and_whitespace_are_normalised() -> None:
    """Case, surrounding and repeated inner whitespace do not matter."""
    assert anls.anls("  New   YORK ", ["new york"]) == 1.0


def test_both_empty_is_one_and_one_empty_is_zero() -> None:
    """Two empty strings match; an empty answer against a non-empty gold scores 0."""
    assert anls.anls("", [""]) == 1.0
    assert anls.anls("", ["abc"]) == 0.0
    assert anls.anls("abc", [""]) == 0.0
    assert anls.anls("   ", ["x"]) == 0.0


def test_distance_ratio_exactly_half_scores_zero() -> None:
    """ab vs ac: distance 1 of length 2 is exactly the 0.5 threshold, so the score is 0."""
    assert anls.similarity("ab", "ac") == 0.5
    assert anls.anls("ab", ["ac"]) == 0.0


def test_just_below_threshold_keeps_similarity() -> None:
    """abc vs abd: distance 1 of 3 keeps sim 2/3."""
    assert anls.anls("abc", ["abd"]) == pytest.approx(2 / 3)


def test_max_over_gold_answers() -> None:
    """The best-matching gold counts; no gold at all scores 0."""
    assert anls.anls("1,234.50", ["$1,234.50", "1,234.50"]) == 1.0
    assert anls.anls("x", []) == 0.0


def test_raw_is_not_thresholded() -> None:
    """anls_raw keeps the similarity the thresholded score drops."""
    assert anls.anls_raw("ab", ["ac"]) == 0.5


def test_extract_answer_last_tag_pair() -> None:
    """The last <answer> block wins, tags in any case."""
    text = "<answer>draft</answer> then <ANSWER> final </Answer>"
    assert anls.extract_answer(text) == "final"


def test_extract_answer_unclosed_tag_runs_to_end() -> None:
    """An unclosed final tag takes the rest of the text."""
    assert anls.extract_answer("blah <answer> 42") == "42"


def test_extract_answer_falls_back_to_last_line() -> None:
    """Without tags the last non-empty line is the answer."""
    assert anls.extract_answer("reasoning\nThe total is 5.\n\n  ") == "The total is 5."
    assert anls.extract_answer("") == ""


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("['a', 'b']", ("a", "b")),
        ('["a"]', ("a",)),
        ({"answers": ["x", "y"]}, ("x", "y")),
        ({"ground_truth": "z"}, ("z",)),
        ([{"text": "t1"}, {"answer": "t2"}, {"value": 3}], ("t1", "t2", "3")),
        ("plain [not json", ("plain [not json",)),
        ("[broken", ("[broken",)),
        (None, ()),
    ],
)
def test_gold_answers_parsed_leniently(raw: object, expected: tuple[str, ...]) -> None:
    """Gold lists come as JSON, Python literals, dicts or lists of dicts."""
    assert anls.gold_answers(raw) == expected
