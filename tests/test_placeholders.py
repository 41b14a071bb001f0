"""Template placeholders (`TaskInfo.placeholders`: an MLflow prompt's `{{question}}`, an Inspect
system message's `{topic}`): every form of candidate keeps them in their part or is refused
before it is executed, the prompts say so only for a skill that has them, and a run on a
template never executes a candidate without them."""

from __future__ import annotations

import attrs
import pytest

import stratune_core.state.events as ev
from llm_cache.records import CallKind, Role
from stratune_core.config.knobs import Config
from stratune_core.operators.patches import Edit, EditOp, Patch, RawCandidate
from stratune_core.prompts.templates import placeholders_rule
from stratune_core.records.enums import Form, Reason, Verdict
from stratune_core.records.parts import check_placeholders_kept, render_parts
from stratune_core.round.candidates import Checked, Refused, check_candidate
from stratune_core.round.run import run
from tests.support.toy import InProcessLLM, ToyOptimizer, ToyTask, toy_target

SKILL = "Answer with the word.\nReturn the final answer inside <answer>...</answer> tags.\n" \
        "Word: {{Word}}"
KEPT = (("", ("{{Word}}",)),)
TWO = render_parts({"system": "Answer about {topic}.", "user": "Question: {{question}}"})
TWO_KEPT = (("system", ("{topic}",)), ("user", ("{{question}}",)))


def _check(new: str, form: Form, parent: str = SKILL, kept=KEPT) -> Checked | Refused:
    op = EditOp.REWRITE if form is Form.F4 else EditOp.REPLACE
    edit = Edit(op=op, new=new) if form is Form.F4 else Edit(op=op, old=parent, new=new)
    raw = RawCandidate(form=form, theme="t", sources=(), patch=Patch(edits=(edit,)))
    return check_candidate(raw, form, forms=(form,), parent=parent, examples=(), max_edits=6,
                           rewrite_factor=4, rewrite_slack_chars=2000, placeholders=kept)


@pytest.mark.parametrize("form", [Form.F1, Form.F3, Form.F4])
def test_a_candidate_that_drops_a_placeholder_is_refused_in_any_form(form):
    refused = _check("Answer briefly.", form)
    assert isinstance(refused, Refused) and refused.reason is Reason.PLACEHOLDER_DROPPED
    assert "`{{Word}}` dropped" in refused.detail
    assert isinstance(_check(SKILL + "\nMind the marker.", form), Checked)


def test_a_placeholder_moved_to_another_part_is_dropped_from_its_own():
    moved = render_parts({"system": "Answer.", "user": "Question: {{question}} on {topic}"})
    assert "`{topic}` dropped from part `system`" in check_placeholders_kept(moved, TWO_KEPT)
    assert check_placeholders_kept(TWO, TWO_KEPT) is None
    refused = _check(moved, Form.F4, parent=TWO, kept=TWO_KEPT)
    assert isinstance(refused, Refused) and refused.reason is Reason.PLACEHOLDER_DROPPED


def test_the_prompt_rule_names_the_placeholders_and_is_absent_without_them():
    assert placeholders_rule(()) is None
    rule = placeholders_rule(TWO_KEPT)
    assert "`{topic}` (part `system`), `{{question}}` (part `user`) are filled in" in rule
    assert "`{{Word}}` is filled in" in placeholders_rule(KEPT)


@attrs.frozen
class TemplateTask(ToyTask):
    """The toy task whose skill is a template with a placeholder."""

    @property
    def info(self):
        return attrs.evolve(super().info, placeholders=KEPT)


class Rewriter(ToyOptimizer):
    """Writes each candidate as an F4 rewrite without the placeholder, then as the toy one."""

    def __call__(self, request):
        response = super().__call__(request)
        if request.kind is CallKind.CANDIDATE_GENERATION:
            return attrs.evolve(response, text="<candidate>\n<form>F4</form>\n<theme>short</theme>"
                                               "\n<rewrite>\nAnswer briefly.\n</rewrite>\n"
                                               "</candidate>")
        return response


def test_a_run_on_a_template_never_executes_a_candidate_without_its_placeholder():
    llm = InProcessLLM(target=toy_target, optimizer=Rewriter(style="good"))
    result = run(Config(seed=0, max_rounds=4), TemplateTask(initial=SKILL), llm)
    invalid = [e for e in result.events if isinstance(e, ev.CandidateInvalid)]
    assert any(e.reason is Reason.PLACEHOLDER_DROPPED for e in invalid)
    assert not any(isinstance(e, ev.CandidateDecided) and e.verdict is Verdict.ACCEPTED
                   for e in result.events)
    targets = [r for r in llm.calls if r.role is Role.TARGET]
    assert targets and all("{{Word}}" in r.system for r in targets)
    prompts = [r.messages[0].text() for r in llm.calls if r.kind is CallKind.CANDIDATE_GENERATION]
    assert prompts and all("Keep every placeholder exactly as written" in p for p in prompts)
