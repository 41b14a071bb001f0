"""Properties of patch parsing and application, and of F2 grounding."""

from __future__ import annotations

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from stratune_core.operators.forms import OfferedExample, check_grounding
from stratune_core.operators.patches import (
    Edit,
    EditOp,
    Patch,
    PatchError,
    apply_patch,
    parse_candidates,
)

# Skill-like text: letters, digits, punctuation, spaces, newlines (CR and tag brackets excluded;
# the parsing property below covers CRLF on purpose).
CHARS = st.characters(
    codec="utf-8", exclude_characters="\r<>`", exclude_categories=("Cs", "Cc")
) | st.sampled_from("\n\n\t ")
texts = st.text(CHARS, max_size=200)
solid_line = st.text(
    st.characters(
        codec="utf-8", exclude_characters="\r\n<>`", exclude_categories=("Cs", "Cc", "Zl", "Zp")
    ),
    min_size=1,
    max_size=40,
).filter(lambda s: s.strip() != "")


@settings(max_examples=200, deadline=None)
@given(text=texts, data=st.data(), new=texts)
def test_single_replace_changes_nothing_outside_the_edited_span(text, data, new):
    assume(len(text) >= 1)
    start = data.draw(st.integers(0, len(text) - 1))
    end = data.draw(st.integers(start + 1, len(text)))
    old = text[start:end]
    assume(text.find(old) == start and text.find(old, start + 1) == -1)
    try:
        result = apply_patch(text, Patch(edits=(Edit(op=EditOp.REPLACE, old=old, new=new),)))
    except PatchError as exc:
        assert exc.reason.value == "unchanged"
        assert (text[:start] + new + text[end:]).strip() == text.strip()
        return
    assert result == text[:start] + new + text[end:]
    assert result.startswith(text[:start]) and result.endswith(text[end:])


@settings(max_examples=200, deadline=None)
@given(text=texts, new=texts)
def test_append_makes_the_new_text_a_suffix(text, new):
    assume(new.strip() != "")
    result = apply_patch(text, Patch(edits=(Edit(op=EditOp.APPEND, new=new),)))
    assert result.endswith(new.strip("\n") + "\n")
    assert result.startswith(text.rstrip("\n"))


@settings(max_examples=200, deadline=None)
@given(text=texts, anchor_at=st.integers(0, 10_000), new=solid_line)
def test_insert_after_keeps_every_original_line_in_order(text, anchor_at, new):
    lines = text.split("\n")
    i = anchor_at % len(lines)
    anchor = lines[i]
    first = text.find(anchor)
    assume(anchor != "" and text.find(anchor, first + 1) == -1)
    result = apply_patch(text, Patch(edits=(Edit(op=EditOp.INSERT_AFTER, old=anchor, new=new),)))
    assert result.split("\n") == [*lines[: i + 1], new, *lines[i + 1 :]]


edit_texts = st.builds(
    lambda first, middle, last: "\n".join([first, *middle, last]),
    solid_line,
    st.lists(
        st.text(
            st.characters(
                codec="utf-8",
                exclude_characters="\r\n<>`",
                exclude_categories=("Cs", "Cc", "Zl", "Zp"),
            ),
            max_size=30,
        ),
        max_size=3,
    ),
    solid_line,
)


def _render(edit: Edit) -> str:
    if edit.op is EditOp.APPEND:
        return f'<edit op="append">\n{edit.new}\n</edit>'
    if edit.op is EditOp.REPLACE:
        return f'<edit op="replace">\n<old>{edit.old}</old>\n<new>\n{edit.new}\n</new>\n</edit>'
    return f"<edit op='insert_after'><anchor>{edit.old}</anchor><new>{edit.new}</new></edit>"


edits = st.builds(
    Edit,
    op=st.sampled_from([EditOp.APPEND, EditOp.REPLACE, EditOp.INSERT_AFTER]),
    new=edit_texts,
    old=edit_texts,
).map(lambda e: Edit(op=e.op, new=e.new) if e.op is EditOp.APPEND else e)


@settings(max_examples=150, deadline=None)
@given(
    patches=st.lists(st.lists(edits, min_size=1, max_size=4), min_size=1, max_size=3),
    crlf=st.booleans(),
)
def test_rendered_candidates_parse_back_to_the_same_edits(patches, crlf):
    reply = "Some prose first.\n\n" + "\n\nAnd another:\n".join(
        "<candidate>\n<form>F1</form>\n<theme>t</theme>\n"
        + "\n".join(map(_render, p))
        + "\n</candidate>"
        for p in patches
    )
    if crlf:
        reply = reply.replace("\n", "\r\n")
    parsed = parse_candidates(reply)
    assert [c.patch for c in parsed] == [Patch(edits=tuple(p)) for p in patches]


offered_lines = st.lists(
    solid_line.map(str.strip).filter(
        lambda s: not s.startswith("#") and not s.endswith(":") and not s.startswith(("- ", "* "))
    ),
    min_size=1,
    max_size=6,
    unique=True,
)


@settings(max_examples=200, deadline=None)
@given(lines=offered_lines, data=st.data(), skill=texts)
def test_grounding_accepts_exactly_the_offered_lines(lines, data, skill):
    offered = [OfferedExample(sample_id=f"s{i}", line=ln) for i, ln in enumerate(lines)]
    skill_lines = {ln.strip() for ln in skill.split("\n")}
    usable = [o for o in offered if o.line not in skill_lines]
    assume(usable)
    chosen = data.draw(st.lists(st.sampled_from(usable), min_size=1, unique=True))
    new = skill.rstrip("\n") + "\n\nExamples:\n" + "\n".join(o.line for o in chosen) + "\n"
    assert check_grounding(skill, new, offered, sources=()) == tuple(o.sample_id for o in chosen)
    intruder = data.draw(solid_line.map(str.strip))
    assume(intruder not in lines and intruder not in skill_lines)
    assume(not intruder.startswith("#") and not intruder.endswith(":"))
    assume(intruder.removeprefix("- ").removeprefix("* ").strip() not in lines)
    result = check_grounding(skill, new + intruder + "\n", offered, sources=())
    assert isinstance(result, str) and "not one of the offered" in result


FRAGMENTS = st.sampled_from(
    [
        "<candidate>",
        "</candidate>",
        "<candidate id='2'>",
        '<edit op="append">',
        "<edit op=replace>",
        "<edit op='insert_after'>",
        "<edit>",
        "</edit>",
        "<rewrite>",
        "</rewrite>",
        "<old>",
        "</old>",
        "<anchor>",
        "</anchor>",
        "<new>",
        "</new>",
        "<form>F2</form>",
        "<theme>",
        "<sources>s1, s2</sources>",
        "```",
        "\n",
        "\r\n",
        "text",
        " ",
        "{",
        "}",
        '"',
        "\\",
        "'",
        '{"strategy": "I2"}',
        ",",
    ]
)
replies = st.lists(FRAGMENTS | st.text(max_size=5), max_size=40).map("".join)


@settings(max_examples=300, deadline=None)
@given(reply=replies, skill=texts)
def test_parsing_and_applying_arbitrary_replies_never_crash(reply, skill):
    from stratune_core.operators.parsing import extract_json_object

    assert extract_json_object(reply) is None or isinstance(extract_json_object(reply), dict)
    for cand in parse_candidates(reply):
        assert (cand.patch is None) == bool(cand.error)
        if cand.patch is not None:
            try:
                result = apply_patch(skill, cand.patch)
            except PatchError:
                continue
            assert result.strip() != skill.strip()
