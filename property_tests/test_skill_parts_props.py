"""Any set of named parts renders to one document that reads back into the same parts, keeps
its parts against itself, and a one-part skill (no marker line) is left as it is."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from stratune_core.records.parts import SkillParts, as_used, check_parts_kept, render_parts

names = st.from_regex(r"[A-Za-z0-9_][A-Za-z0-9_./-]{0,12}", fullmatch=True)
# part texts: any text with no newline at either end and no line that opens a part
texts = st.text(st.characters(blacklist_categories=("Cs",)), max_size=80).map(
    lambda t: t.strip("\n")).filter(lambda t: "[[part:" not in t)


@given(st.dictionaries(names, texts, min_size=1, max_size=5))
def test_render_then_read_is_the_identity(parts):
    document = render_parts(parts)
    read = SkillParts.read(document)
    assert read.as_dict() == parts and list(read.names) == list(parts)
    assert read.preamble == ""
    assert check_parts_kept(document, document) is None


@given(texts)
def test_a_text_without_markers_is_one_part(text):
    assert SkillParts.read(text).names == ()
    assert as_used(text) == text
    assert check_parts_kept(text, text + "\nmore") is None
