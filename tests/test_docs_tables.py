"""The docs' generated tables: docs/profiles.md's released-profile table is what the records
render (`replay/docs_tables.py`), and every field the released profile changes has a row."""

from __future__ import annotations

import re

import attrs
import pytest

from replay.docs_tables import (
    BEGIN,
    END,
    TableError,
    current_page,
    main,
    released_table,
    section_anchors,
    with_table,
)
from stratune_core.config.mechanisms import MECHANISMS, ProfileRow
from stratune_core.config.profile_rows import FIELD_ROWS, released_rows
from stratune_core.config.profiles import paper, released
from tests.support.docs import DOCS, page


def _named(row: ProfileRow) -> set[str]:
    """The config keys a row names in its two profile columns (`screen_smoke: 0` names
    `screen_smoke`)."""
    return {m.split(":")[0] for cell in (row.paper, row.released)
            for m in re.findall(r"`([^`]+)`", cell)}


def test_the_released_profile_table_is_generated_from_the_records():
    assert current_page(DOCS) == page("profiles.md"), \
        "docs/profiles.md: the released-profile table is stale; run `make docs-tables`"


def test_every_field_the_released_profile_changes_has_a_row():
    """A new released variant cannot reach the profile without reaching the docs."""
    changed = {a.name for a in attrs.fields(type(paper()))
               if getattr(paper(), a.name) != getattr(released(), a.name)}
    covered = {*FIELD_ROWS, *MECHANISMS} | {k for _name, row in released_rows() for k in _named(row)}
    assert changed <= covered, sorted(changed - covered)


def test_one_row_per_mechanism_and_per_plain_field():
    names = [name for name, _row in released_rows()]
    assert len(names) == len(set(names)) == len(MECHANISMS) + len(FIELD_ROWS)
    assert not set(FIELD_ROWS) & set(MECHANISMS)


def test_rows_follow_the_sections_they_cite():
    """The released code's description's order: the first section each row cites."""
    firsts = [tuple(map(int, row.cites[0].split("."))) for _name, row in released_rows()]
    assert firsts == sorted(firsts)


def test_a_cell_keeps_its_bars_and_a_cite_links_its_heading():
    anchors = section_anchors("## 4 Candidate evaluation\n### 4.3 Staged screening\n"
                              "### 4.10 Early stopping\n# 5 Not a section\n")
    assert anchors == {"4": "4-candidate-evaluation", "4.3": "43-staged-screening",
                       "4.10": "410-early-stopping"}
    table = released_table(section_anchors(page("released-code.md")))
    assert r"max(12, \|Q_s\|/2)" in table
    assert "[§4.10](released-code.md#410-early-stopping)" in table


def test_a_cite_of_a_missing_section_is_one_line_naming_the_row():
    with pytest.raises(TableError) as caught:
        released_table({"1.2": "12-warm-up"})
    message = str(caught.value)
    assert "\n" not in message and message.startswith("warmup: cites §9.1")


def test_the_markers_are_required_and_the_text_around_them_kept():
    with pytest.raises(TableError, match="markers"):
        with_table("no table here\n", "| a |")
    text = f"before\n{BEGIN}\n| old |\n{END}\nafter\n"
    assert with_table(text, "| new |") == f"before\n{BEGIN}\n| new |\n{END}\nafter\n"


def test_the_command_rewrites_a_stale_page_and_check_reports_it(tmp_path, capsys):
    for name in ("profiles.md", "released-code.md"):
        (tmp_path / name).write_text(page(name), encoding="utf-8")
    stale = page("profiles.md").replace("| warm-up:", "| warm up:")
    (tmp_path / "profiles.md").write_text(stale, encoding="utf-8")
    assert main(["--docs", str(tmp_path), "--check"]) == 1
    assert "make docs-tables" in capsys.readouterr().err
    assert main(["--docs", str(tmp_path)]) == 0
    assert (tmp_path / "profiles.md").read_text(encoding="utf-8") == page("profiles.md")
    assert main(["--docs", str(tmp_path / "missing")]) == 2
