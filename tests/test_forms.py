"""Form descriptions and the F2 / F4 rules."""

from __future__ import annotations

import pytest

from stratune_core.operators.forms import (
    STRATEGY_DESCRIPTIONS,
    OfferedExample,
    added_lines,
    check_grounding,
    check_markup_kept,
    format_lines,
)
from stratune_core.records.enums import Form, Strategy
from stratune_core.records.form_spec import FORM_SPECS, form_spec

SKILL = """# Solving word puzzles
Read the word carefully.
Think about the marker in brackets.
Put your final answer inside <answer></answer> tags.
Return only the answer, with no explanation.
The information in the prompt is complete.
ANSWER: must be on the last line.
"""

OFFERED = (
    OfferedExample(sample_id="s1", line="[s1] Word: cat [U] -> CAT"),
    OfferedExample(sample_id="s2", line="[s2] Word: dog [R] -> god"),
    OfferedExample(sample_id="s3", line="[s3] Word: owl [P] -> owl"),
)


def test_every_form_and_strategy_is_described():
    assert {s.form for s in FORM_SPECS} == set(Form)
    assert set(STRATEGY_DESCRIPTIONS) == set(Strategy)
    assert all(len(s.description) > 40 for s in FORM_SPECS)
    assert "rewrite" in form_spec(Form.F4).description and "example" in form_spec(Form.F2).description
    assert STRATEGY_DESCRIPTIONS[Strategy.I3].startswith("Parallel Sampling")


def test_format_lines_heuristic():
    assert format_lines(SKILL) == (
        "Put your final answer inside <answer></answer> tags.",
        "Return only the answer, with no explanation.",
        "ANSWER: must be on the last line.",
    )


@pytest.mark.parametrize(
    ("line", "is_format"),
    [
        ("Respond with the answer in lower case.", True),
        ("Format your answer as a number.", True),
        ("Output the final answer only.", True),
        ("Final answer: the value", True),
        ("Wrap code in <code/>.", True),
        ('Use <answer type="int">N</answer>.', True),
        ("If x <y and z> w then stop.", False),  # comparisons are not tags
        ("Reply politely.", False),  # a format verb without "answer"
        ("Check the answer twice.", False),  # "answer" without a format verb
        ("Use all the information.", False),  # "format" inside a longer word
        ("## Output format", False),
    ],
)
def test_format_line_cases(line, is_format):
    assert (format_lines(line) == (line,)) is is_format


MARKUP = ("<answer>", "</answer>")


def test_f4_keeps_only_the_markup_the_scorer_parses():
    # Every other format line may change: saying less around the answer is a format rule too.
    rewritten = "Answer with the value alone.\nPut it inside <answer></answer> tags.\n"
    assert check_markup_kept(SKILL, rewritten, MARKUP) is None
    assert check_markup_kept(SKILL, "Answer with the value alone.", MARKUP) == "<answer>"
    assert check_markup_kept(SKILL, "Ends with <answer> only.", MARKUP) == "</answer>"
    # markup the parent never asked for is not required of the candidate
    assert check_markup_kept("No tags here.", "Still none.", MARKUP) is None
    # a task that declares no markup holds nothing fixed
    assert check_markup_kept(SKILL, "Be terse.", ()) is None


def test_the_f4_description_does_not_freeze_the_format():
    assert "word for word" not in form_spec(Form.F4).description
    assert "output-format" not in form_spec(Form.F4).description


def test_added_lines_is_a_multiset_difference_without_headings():
    old = "a\nb\nb\n"
    new = "a\nb\nb\nb\n## Examples\nExamples:\n\n  c  \n"
    assert added_lines(old, new) == ("b", "c")


def test_grounding_accepts_offered_lines_and_reports_ids_in_use_order():
    new = SKILL + "\nExamples:\n[s2] Word: dog [R] -> god\n- [s1] Word: cat [U] -> CAT\n"
    assert check_grounding(SKILL, new, OFFERED, sources=("s9",)) == ("s2", "s1")


def test_grounding_same_line_twice_counts_once():
    new = SKILL + "[s3] Word: owl [P] -> owl\n[s3] Word: owl [P] -> owl\n"
    assert check_grounding(SKILL, new, OFFERED, sources=()) == ("s3",)


def test_grounding_rejects_an_edited_example_or_added_prose():
    edited = SKILL + "[s1] Word: cat [U] -> Cat\n"
    result = check_grounding(SKILL, edited, OFFERED, sources=("s1",))
    assert isinstance(result, str) and "[s1] Word: cat [U] -> Cat" in result
    prose = SKILL + "[s1] Word: cat [U] -> CAT\nAlways uppercase [U] words.\n"
    result = check_grounding(SKILL, prose, OFFERED, sources=("s1",))
    assert isinstance(result, str) and "Always uppercase" in result


def test_grounding_needs_at_least_one_added_example():
    assert check_grounding(SKILL, SKILL + "\n## Examples\n", OFFERED, sources=()) == (
        "the candidate adds no example line"
    )
    removed = SKILL.replace("Read the word carefully.\n", "")
    assert isinstance(check_grounding(SKILL, removed, OFFERED, sources=()), str)


def test_grounding_example_already_in_the_skill_is_not_added():
    old = SKILL + "[s1] Word: cat [U] -> CAT\n"
    new = old + "[s2] Word: dog [R] -> god\n"
    assert check_grounding(old, new, OFFERED, sources=()) == ("s2",)
