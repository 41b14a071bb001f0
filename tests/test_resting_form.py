"""A form whose every candidate in a round was refused before evaluation sits the next round
out (`rest_refused_form`): an optimizer that keeps choosing one form and writing candidates
that form refuses is offered the others, instead of repeating it until the unusable rounds end
the run. A fixed operator's form never rests; runs recorded before the rule read it as off."""

from __future__ import annotations

import pytest

import stratune_core.state.events as ev
from llm_cache.records import CallKind, Request, Response, Usage
from replay.rundir.serde import manifest_from_json
from stratune_core.config.knobs import Config
from stratune_core.config.operators import available_forms
from stratune_core.records.enums import Form, FormMenu
from stratune_core.round.run import run
from tests.support.toy import InProcessLLM, ToyOptimizer, ToyTask
from tests.test_unusable_rounds import LEGACY, NONSENSE


class _OneForm:
    """Chooses I2 with F3 whenever F3 is offered; every candidate is nonsense."""

    def __init__(self) -> None:
        self.base = ToyOptimizer(style="good", strategy_plan=("I2",), form_plan=("F3",))

    def __call__(self, request: Request) -> Response:
        if request.kind is CallKind.CANDIDATE_GENERATION:
            return Response(text=NONSENSE, usage=Usage(input_tokens=1, output_tokens=1))
        return self.base(request)


def _chosen(**config: object) -> list[ev.OperatorChosen]:
    result = run(Config(seed=1, max_unusable_rounds=None, **config), ToyTask(),
                 InProcessLLM(optimizer=_OneForm()))
    return [e for e in result.events if isinstance(e, ev.OperatorChosen)]


def test_the_refused_form_is_not_offered_the_next_round():
    forms = [e.form for e in _chosen() if e.form is not None]
    assert len(forms) >= 6
    pairs = list(zip(forms, forms[1:], strict=False))
    assert (Form.F3, Form.F3) not in pairs  # every F3 round was refused whole
    assert forms.count(Form.F3) >= len(forms) // 2 - 1  # and F3 comes back after its rest


def test_without_the_rule_the_optimizer_repeats_its_form():
    forms = [e.form for e in _chosen(rest_refused_form=False) if e.form is not None]
    assert len(forms) >= 6 and set(forms) == {Form.F3}


def test_a_fixed_operator_keeps_its_form():
    chosen = _chosen(operator="I2+F3")
    assert chosen and {e.form for e in chosen} == {Form.F3}


def test_the_rest_never_leaves_a_round_without_a_form():
    assert available_forms(FormMenu.F4, None, Form.F4) == (Form.F4,)
    assert Form.F2 not in available_forms(FormMenu.ALL, None, Form.F1)  # no examples to copy
    assert Form.F1 not in available_forms(FormMenu.ALL, None, Form.F1)


@pytest.mark.parametrize("trace", ["demo", "demo-i1-only", "demo-f4-only"])
def test_a_run_recorded_before_the_rule_reads_it_as_off(trace):
    text = (LEGACY / f"{trace}.json").read_text(encoding="utf-8")
    assert "rest_refused_form" not in text
    assert manifest_from_json(text).config.rest_refused_form is False


def test_the_released_profile_does_not_rest():
    from stratune_core.config.profiles import paper, released

    assert paper().rest_refused_form and not released().rest_refused_form
