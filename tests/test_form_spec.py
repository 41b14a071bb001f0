"""Every revision form has one home, its `FormSpec` (records/form_spec.py), and every reader
answers for every spec from it: the label parsers (a candidate's `<form>` and the selection
reply), the prompts (the form menu's description), `--forms` and the forms a round offers, and
compare's tables (Table 6's columns, Fig. 3a's form shares, the operators and the one-form
ablation's label)."""

from __future__ import annotations

import pytest

from replay.commands.parser import build_parser
from replay.compare import fixed_operators, group, sequences
from replay.compare.runs import MENU_LABELS, _single
from stratune_core.config.operators import available_forms
from stratune_core.operators.parsing import parse_selection
from stratune_core.operators.patches import parse_candidates
from stratune_core.prompts.templates import generation_prompt
from stratune_core.records.enums import Form, FormMenu, Strategy
from stratune_core.records.form_spec import (
    FORM_SPECS,
    FormSpec,
    form_in_label,
    form_of_code,
    form_spec,
    menu_forms,
)
from tests.test_f2_format_example import feedback

REQUIRED = ["--task", "toy", "--target", "fake:t", "--optimizer", "fake:o", "--out", "run"]


def _train(*flags: str):
    return build_parser().parse_args(["train", *REQUIRED, *flags])


def test_one_spec_per_form_with_its_value_as_code():
    assert [s.form for s in FORM_SPECS] == list(Form)
    assert all(s.code == s.form.value and form_spec(s.form) is s for s in FORM_SPECS)
    assert len({s.column for s in FORM_SPECS}) == len(FORM_SPECS)
    assert all(s.description.startswith(s.name + ":") for s in FORM_SPECS)


@pytest.mark.parametrize("spec", FORM_SPECS, ids=lambda s: s.code)
def test_every_spec_answers_every_reader(spec: FormSpec):
    # the label parsers: a candidate's <form> tag, loosely written, and the selection reply
    edit = "<rewrite>x</rewrite>" if spec.rewrite else "<add>x</add>"
    for label in (spec.code, spec.code.lower(), f"{spec.code[0]} {spec.code[1:]} ({spec.name})"):
        (raw,) = parse_candidates(f"<candidate><form>{label}</form><theme>t</theme>{edit}"
                                  "</candidate>")
        assert raw.form is spec.form, label
    reply = parse_selection(f'{{"strategy": "I1", "form": " {spec.code.lower()} ", "why": "w"}}',
                            allowed=list(Strategy), forms=list(Form))
    assert reply is not None and reply.form is spec.form
    assert form_of_code(spec.code) is spec.form and form_in_label(spec.name) is None
    # the prompts: a request for this form alone names it and describes it
    text = generation_prompt(skill_text="Be brief.", feedback=feedback(), forms=(spec.form,),
                             n_candidates=1, max_edits=6, budget=8_000)
    assert f"- {spec.code}: {spec.description}" in text
    assert f"in form {spec.code} only" in text
    # --forms and the forms a round offers: every form under `all` (one that needs examples
    # only when some are offered); a spec's own menu offers it alone
    assert spec.form in available_forms(FormMenu.ALL, feedback())
    assert (spec.form in available_forms(FormMenu.ALL, feedback(examples=()))) \
        != spec.needs_examples
    if spec.menu is not None:
        assert menu_forms(spec.menu) == available_forms(spec.menu, None) == (spec.form,)
        assert MENU_LABELS[spec.menu] == spec.only_label == _single("forms", spec.menu)
        assert spec.only_label in group.PAPER_ORDER
        assert _train("--forms", spec.menu.value).forms == spec.menu.value
    # compare's tables
    assert (spec.code, f"{spec.code} {spec.column}") in fixed_operators.FORMS
    assert spec.code in sequences.FORMS
    assert all(f"{s.value}+{spec.code}" in group.OPERATORS for s in Strategy)


def test_every_menu_offers_some_form_and_the_command_line_takes_every_menu():
    assert menu_forms(FormMenu.ALL) == tuple(Form)
    assert all(menu_forms(m) for m in FormMenu)
    for menu in FormMenu:
        assert _train("--forms", menu.value).forms == menu.value
    with pytest.raises(SystemExit):
        _train("--forms", "F9")


def test_a_label_names_a_form_only_by_a_known_code():
    assert form_in_label("F5 then F2") is Form.F2  # the first known code
    assert form_in_label("F12") is None and form_of_code("F5") is None
