"""Candidate patches: the tag format and applying edits to a skill."""

from __future__ import annotations

import pytest

from stratune_core.operators.patches import (
    Edit,
    EditOp,
    Patch,
    PatchError,
    apply_patch,
    parse_candidates,
    rewrite_cap,
)
from stratune_core.records.enums import Form, Reason

SKILL = "Solve the task.\nThink step by step.\nPut the final answer in <answer></answer> tags.\n"

FULL = """Here is my proposal.

<candidate>
<form>F1</form>
<theme>answer with the value only</theme>
<sources>s12, s7</sources>
<edit op="append">
- When the question asks for an amount, reply with the number only.
</edit>
<edit op="replace">
<old>Think step by step.</old>
<new>Think step by step, then check units.</new>
</edit>
<edit op="insert_after">
<anchor>Solve the task.</anchor>
<new>Read every number twice.</new>
</edit>
</candidate>
"""


def _one(text: str):
    (cand,) = parse_candidates(text)
    return cand


# --- parsing ------------------------------------------------------------------------------------


def test_full_block_parses_every_field_in_order():
    cand = _one(FULL)
    assert cand.form is Form.F1
    assert cand.theme == "answer with the value only"
    assert cand.sources == ("s12", "s7")
    assert cand.error == ""
    assert cand.patch is not None
    assert cand.patch.edits == (
        Edit(
            op=EditOp.APPEND,
            new="- When the question asks for an amount, reply with the number only.",
        ),
        Edit(
            op=EditOp.REPLACE,
            old="Think step by step.",
            new="Think step by step, then check units.",
        ),
        Edit(op=EditOp.INSERT_AFTER, old="Solve the task.", new="Read every number twice."),
    )
    assert not cand.patch.is_rewrite


def test_inline_edit_format_of_the_prompt():
    cand = _one(
        "<candidate><form>F1</form><theme>t</theme>"
        '<edit op="replace"><old>a b</old><new>c</new></edit></candidate>'
    )
    assert cand.patch == Patch(edits=(Edit(op=EditOp.REPLACE, old="a b", new="c"),))


def test_rewrite_block():
    cand = _one(
        "<candidate><form>F4</form><theme>regroup</theme><rewrite>\nNew skill.\nLine 2.\n</rewrite></candidate>"
    )
    assert cand.form is Form.F4
    assert cand.patch == Patch(edits=(Edit(op=EditOp.REWRITE, new="New skill.\nLine 2."),))
    assert cand.patch.is_rewrite


def test_several_blocks_each_parsed_independently():
    text = (
        '<candidate><form>F1</form><edit op="append">rule one</edit></candidate>\n'
        "and a broken one:\n<candidate><form>F3</form><theme>oops</theme></candidate>\n"
        '<candidate><form>F2</form><edit op="frobnicate">x</edit></candidate>'
    )
    a, b, c = parse_candidates(text)
    assert a.patch == Patch(edits=(Edit(op=EditOp.APPEND, new="rule one"),))
    assert b.patch is None and b.form is Form.F3 and "no <edit>" in b.error
    assert c.patch is None and "unknown op 'frobnicate'" in c.error


def test_crlf_fences_prose_and_missing_final_close():
    text = (
        "Sure!\r\n```xml\r\n<candidate>\r\n<form>F3</form>\r\n<theme>steps</theme>\r\n"
        "<edit op=append>\r\n1. Read.\r\n2. Check.\r\n</edit>\r\n```\r\nHope this helps."
    )
    cand = _one(text)
    assert cand.form is Form.F3
    assert cand.patch == Patch(edits=(Edit(op=EditOp.APPEND, new="1. Read.\n2. Check."),))


def test_missing_rewrite_close_at_end_drops_the_wrapping_fence():
    text = "```\n<candidate>\n<form>F4</form>\n<rewrite>\nAll new.\nKeep <answer></answer>.\n```\n"
    cand = _one(text)
    assert cand.patch == Patch(
        edits=(Edit(op=EditOp.REWRITE, new="All new.\nKeep <answer></answer>."),)
    )


@pytest.mark.parametrize(
    "attr",
    [
        "op='insert_after'",
        'op="insert_after"',
        "op=insert_after",
        'op="insert-after"',
        "OP = 'INSERT_AFTER'",
    ],
)
def test_op_attribute_quoting(attr):
    cand = _one(
        f"<candidate><form>F1</form><edit {attr}><anchor>A</anchor><new>B</new></edit></candidate>"
    )
    assert cand.patch == Patch(edits=(Edit(op=EditOp.INSERT_AFTER, old="A", new="B"),))


def test_internal_text_verbatim_blank_edges_stripped():
    body = "\n\n  indented first\n\n  kept   spacing \n\n"
    cand = _one(f'<candidate><edit op="append">{body}</edit></candidate>')
    assert cand.patch.edits[0].new == "  indented first\n\n  kept   spacing "


def test_empty_new_in_replace_means_deletion():
    cand = _one('<candidate><edit op="replace"><old>X</old><new></new></edit></candidate>')
    assert cand.patch.edits == (Edit(op=EditOp.REPLACE, old="X", new=""),)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ('<edit op="replace"><new>x</new></edit>', "missing <old>"),
        ('<edit op="replace"><old>x</old></edit>', "missing <new>"),
        ('<edit op="insert_after"><new>x</new></edit>', "missing <anchor>"),
        ("<edit>x</edit>", "no op attribute"),
        ('<edit op="append">a\n<edit op="append">b</edit>', "not closed"),
    ],
)
def test_malformed_edits_explain_themselves(body, message):
    cand = _one(f"<candidate><form>F1</form><theme>t</theme>{body}</candidate>")
    assert cand.patch is None
    assert message in cand.error
    assert cand.form is Form.F1 and cand.theme == "t"


def test_form_label_tolerance_and_unknown_form():
    assert (
        _one('<candidate><form>f2 (examples)</form><edit op="append">x</edit></candidate>').form
        is Form.F2
    )
    assert _one('<candidate><form>rules</form><edit op="append">x</edit></candidate>').form is None


def test_sources_split_and_unbracketed():
    cand = _one('<candidate><sources>[s1]; s2  s3,</sources><edit op="append">x</edit></candidate>')
    assert cand.sources == ("s1", "s2", "s3")


def test_prose_mentioning_candidate_is_not_a_block():
    text = (
        'I will write one <candidate> block.\n<candidate><form>F1</form><edit op="append">x</edit>'
    )
    (cand,) = parse_candidates(text)
    assert cand.patch == Patch(edits=(Edit(op=EditOp.APPEND, new="x"),))
    assert parse_candidates("<candidate>I cannot do this.</candidate>") == ()


def test_unclosed_form_tag_still_names_the_form():
    assert _one('<candidate><form>F3\n<edit op="append">x</edit></candidate>').form is Form.F3


def test_bare_patch_without_candidate_wrapper_and_no_candidate_at_all():
    assert _one('<form>F1</form>\n<edit op="append">x</edit>').patch is not None
    assert parse_candidates("I cannot help with that.") == ()


# --- applying ---------------------------------------------------------------------------------


def _apply(*edits: Edit, **kw) -> str:
    return apply_patch(SKILL, Patch(edits=edits), **kw)


def test_full_block_applies_in_order():
    result = apply_patch(SKILL, _one(FULL).patch)
    assert result == (
        "Solve the task.\nRead every number twice.\nThink step by step, then check units.\n"
        "Put the final answer in <answer></answer> tags.\n\n"
        "- When the question asks for an amount, reply with the number only.\n"
    )


def test_append_format():
    assert (
        apply_patch("a\n\n\n", Patch(edits=(Edit(op=EditOp.APPEND, new="\nb\n\n"),))) == "a\n\nb\n"
    )
    assert apply_patch("a", Patch(edits=(Edit(op=EditOp.APPEND, new="b"),))) == "a\n\nb\n"


def test_insert_after_goes_after_the_anchor_line_end():
    # anchor in mid-line: the new line follows the whole line
    assert _apply(Edit(op=EditOp.INSERT_AFTER, old="step by", new="X")) == SKILL.replace(
        "Think step by step.\n", "Think step by step.\nX\n"
    )
    # anchor ending with a newline, and anchor at the very end without one
    assert (
        apply_patch("a\nb\n", Patch(edits=(Edit(op=EditOp.INSERT_AFTER, old="a\n", new="X"),)))
        == "a\nX\nb\n"
    )
    assert (
        apply_patch("a\nb", Patch(edits=(Edit(op=EditOp.INSERT_AFTER, old="b", new="X"),)))
        == "a\nb\nX"
    )


def test_replace_with_empty_new_deletes():
    assert _apply(Edit(op=EditOp.REPLACE, old="Think step by step.\n", new="")) == (
        "Solve the task.\nPut the final answer in <answer></answer> tags.\n"
    )


def test_edits_validated_against_the_current_text():
    # the second edit's anchor only exists after the first edit
    result = _apply(
        Edit(op=EditOp.REPLACE, old="Solve the task.", new="Solve the puzzle."),
        Edit(op=EditOp.INSERT_AFTER, old="puzzle", new="Be brief."),
    )
    assert result.startswith("Solve the puzzle.\nBe brief.\nThink")
    with pytest.raises(PatchError, match="edit 2"):
        _apply(
            Edit(op=EditOp.REPLACE, old="Solve the task.", new="Solve the puzzle."),
            Edit(op=EditOp.REPLACE, old="Solve the task.", new="again"),
        )


@pytest.mark.parametrize(
    ("old", "times"),
    [("missing text", "occurs 0 times"), ("t", "occurs 7 times"), ("aa", "occurs 2 times")],
)
def test_old_must_occur_exactly_once(old, times):
    text = SKILL + "aaa\n"  # "aa" occurs twice, overlapping
    with pytest.raises(PatchError) as info:
        apply_patch(
            text,
            Patch(
                edits=(Edit(op=EditOp.APPEND, new="ok"), Edit(op=EditOp.REPLACE, old=old, new="x"))
            ),
        )
    assert info.value.reason is Reason.INVALID_PATCH
    assert "edit 2 (replace)" in info.value.detail and times in info.value.detail


def test_anchor_must_occur_exactly_once():
    with pytest.raises(PatchError, match=r"edit 1 \(insert_after\): <anchor> occurs 0 times"):
        _apply(Edit(op=EditOp.INSERT_AFTER, old="nope", new="x"))


@pytest.mark.parametrize(
    "edit",
    [
        Edit(op=EditOp.REPLACE, old="", new="x"),
        Edit(op=EditOp.APPEND, new="\n \n"),
        Edit(op=EditOp.INSERT_AFTER, old="Solve", new=""),
    ],
)
def test_empty_texts_are_invalid(edit):
    with pytest.raises(PatchError) as info:
        _apply(edit)
    assert info.value.reason is Reason.INVALID_PATCH


def test_edit_count_limits():
    with pytest.raises(PatchError, match="no edits"):
        apply_patch(SKILL, Patch(edits=()))
    many = tuple(Edit(op=EditOp.APPEND, new=f"rule {i}") for i in range(7))
    with pytest.raises(PatchError, match="7 edits, at most 6"):
        apply_patch(SKILL, Patch(edits=many))
    assert apply_patch(SKILL, Patch(edits=many[:6])).endswith("rule 5\n")
    with pytest.raises(PatchError, match="3 edits, at most 2"):
        apply_patch(SKILL, Patch(edits=many[:3]), max_edits=2)


def test_rewrite_rules():
    rw = Edit(op=EditOp.REWRITE, new="\nBrand new skill.\n\n")
    assert _apply(rw) == "Brand new skill.\n"
    with pytest.raises(PatchError, match="only edit") as info:
        _apply(rw, Edit(op=EditOp.APPEND, new="x"))
    assert info.value.reason is Reason.INVALID_PATCH
    with pytest.raises(PatchError, match="empty"):
        _apply(Edit(op=EditOp.REWRITE, new=" \n"))
    with pytest.raises(PatchError) as info:
        _apply(Edit(op=EditOp.REWRITE, new="x" * 11), rewrite_cap=10)
    assert (
        info.value.reason is Reason.REWRITE_TOO_LONG
        and "11 characters, at most 10" in info.value.detail
    )
    assert _apply(Edit(op=EditOp.REWRITE, new="x" * 10), rewrite_cap=10) == "x" * 10 + "\n"


def test_unchanged_results_are_rejected():
    for edit in (
        Edit(op=EditOp.REPLACE, old="Solve", new="Solve"),
        Edit(op=EditOp.REWRITE, new=SKILL.strip()),
    ):
        with pytest.raises(PatchError) as info:
            _apply(edit)
        assert info.value.reason is Reason.UNCHANGED


def test_patch_error_is_a_stratune_error_with_readable_message():
    from stratune_core.records.errors import StraTuneError

    err = PatchError(Reason.INVALID_PATCH, "edit 1 (replace): <old> occurs 0 times")
    assert isinstance(err, StraTuneError)
    assert str(err) == "invalid_patch: edit 1 (replace): <old> occurs 0 times"


def test_rewrite_cap():
    assert rewrite_cap("x" * 100) == 10_100
    assert rewrite_cap("x" * 5000) == 20_000
    assert rewrite_cap("x" * 100, factor=2, slack=10) == 200
