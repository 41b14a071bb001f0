"""Skills of several named parts (`stratune_core/records/parts.py`): one document the optimizer
revises, a candidate usable only if it keeps the parts, each part back where it is used, and a
one-part skill exactly the text it always was."""

from __future__ import annotations

import pytest

import stratune_core.state.events as ev
from llm_cache.records import CallKind
from stratune_core.config.knobs import Config
from stratune_core.operators.patches import Edit, EditOp, Patch, RawCandidate
from stratune_core.prompts.templates import parts_rule
from stratune_core.records.enums import Form, Reason
from stratune_core.records.parts import (
    SkillParts,
    as_used,
    check_parts_kept,
    part_names,
    render_parts,
)
from stratune_core.round.candidates import Checked, Refused, check_candidate
from stratune_core.round.run import run
from stratune_core.tasks.common import Placement, target_request
from tests.support.toy import INITIAL_SKILL, InProcessLLM, ToyTask

TWO = render_parts({"answer": "Answer with the word.",
                    "format": "Return the final answer inside <answer>...</answer> tags."})


def test_a_document_reads_back_into_its_parts():
    parts = SkillParts.read(TWO)
    assert parts.names == ("answer", "format")
    assert parts.as_dict()["format"].startswith("Return the final answer")
    assert render_parts(parts.as_dict()) == TWO
    assert as_used(TWO) == INITIAL_SKILL.replace("\n", "\n\n")


def test_a_skill_without_markers_is_one_part_and_unchanged():
    assert part_names(INITIAL_SKILL) == ()
    assert as_used(INITIAL_SKILL) == INITIAL_SKILL
    assert check_parts_kept(INITIAL_SKILL, INITIAL_SKILL + "\nMore.") is None
    assert parts_rule(INITIAL_SKILL) is None


@pytest.mark.parametrize(("new", "says"), [
    (TWO.replace("[[part: format]]\n", ""), "part `format` dropped"),
    (TWO.replace("[[part: format]]", "[[part: output]]"), "part `format` dropped or renamed"),
    (TWO + "\n\n[[part: extra]]\nMore.", "part `extra` added"),
    (render_parts({"format": "b", "answer": "a"}), "reordered"),
    ("Preface.\n" + TWO, "text before the first part marker"),
])
def test_a_candidate_that_changes_the_parts_is_refused(new, says):
    assert says in (check_parts_kept(TWO, new) or "")
    raw = RawCandidate(form=Form.F4, theme="t", sources=(),
                       patch=Patch(edits=(Edit(op=EditOp.REWRITE, new=new),)))
    refused = check_candidate(raw, Form.F4, forms=(Form.F4,), parent=TWO, examples=(),
                              max_edits=6, rewrite_factor=4, rewrite_slack_chars=2000)
    assert isinstance(refused, Refused) and refused.reason is Reason.PARTS_CHANGED


def test_an_edit_inside_a_part_is_usable():
    raw = RawCandidate(form=Form.F1, theme="t", sources=(), patch=Patch(edits=(
        Edit(op=EditOp.INSERT_AFTER, old="Answer with the word.", new="Mind the marker."),)))
    checked = check_candidate(raw, Form.F1, forms=(Form.F1,), parent=TWO, examples=(),
                              max_edits=6, rewrite_factor=4, rewrite_slack_chars=2000)
    assert isinstance(checked, Checked)
    assert SkillParts.read(checked.text).as_dict()["answer"] == "Answer with the word.\nMind the marker."


def test_names_that_could_not_be_read_back_are_refused():
    with pytest.raises(ValueError, match="part name"):
        render_parts({"two words": "x"})
    with pytest.raises(ValueError, match="opens a part"):
        render_parts({"a": "[[part: b]]"})


def test_the_target_reads_the_parts_without_markers():
    request = target_request(skill=TWO, user_text="Word: apple", model="m", max_tokens=8,
                             placement=Placement.SYSTEM)
    assert request.system == as_used(TWO) and "[[part:" not in request.system


def test_a_run_on_a_two_part_skill_keeps_its_parts():
    llm = InProcessLLM()
    result = run(Config(seed=0), ToyTask(initial=TWO), llm)
    added = [e.text for e in result.events if isinstance(e, ev.SkillAdded)]
    assert len(added) > 1
    assert all(part_names(text) == ("answer", "format") for text in added)
    prompts = [r.messages[0].text() for r in llm.calls if r.kind is CallKind.CANDIDATE_GENERATION]
    assert prompts and all("The skill has 2 parts (`answer`, `format`)" in p for p in prompts)
    assert result.state.current_text != TWO  # it learnt, inside the parts


def _shown(panels) -> str:
    import io

    from rich.console import Console

    console = Console(file=io.StringIO(), width=100, color_system=None)
    for panel in panels:
        console.print(panel)
    return console.file.getvalue()


def test_the_viewer_shows_each_part_apart():
    from replay.viewer.detail import diff_panels, text_panels

    new = TWO.replace("Answer with the word.", "Answer with the word.\nMind the marker.")
    shown = _shown(diff_panels(TWO, new, "diff against parent abc"))
    assert "part answer · diff against parent abc" in shown and "+Mind the marker." in shown
    assert "unchanged: format" in shown and "part format ·" not in shown
    full = _shown(text_panels(new, "candidate text"))
    assert "part answer · candidate text" in full and "part format · candidate text" in full
    assert "[[part:" not in full
    assert "part " not in _shown(text_panels(INITIAL_SKILL, "candidate text"))
