"""One record per revision form (paper Table 4, App. A.2): `FormSpec`, everything its readers
need, so a form has one home. The label parsers (`operators/patches.py`, `operators/parsing.py`)
read its letter code, the prompts its description, `--forms` and `config/operators.py` its
menu and whether it needs offered examples, candidate checks whether it rewrites, and compare's
tables its code and column title."""

from __future__ import annotations

import re
from collections.abc import Mapping
from types import MappingProxyType

from attrs import frozen

from stratune_core.records.enums import Form, FormMenu


@frozen(kw_only=True)
class FormSpec:
    """`code`: the letter code every reader spells (the trace's value, F1..F4); `name`: the
    paper's name; `column`: its word in compare's column titles ("F1 rules"); `description`:
    what the optimizer's prompts say of it (its bytes are part of the prompts: changing one
    raises `prompts/templates.PROMPT_VERSION`); `rewrite`: its candidate replaces the whole
    skill (a `<rewrite>`), else it edits; `needs_examples`: a round offers it only with solved
    samples to copy from; `menu`: the `forms` ablation that offers it alone, if any."""

    form: Form
    code: str
    name: str
    column: str
    description: str
    rewrite: bool = False
    needs_examples: bool = False
    menu: FormMenu | None = None

    @property
    def only_label(self) -> str:
        """Compare's label of the runs offered this form alone ("F4 only")."""
        return f"{self.code} only"


FORM_SPECS: tuple[FormSpec, ...] = (
    FormSpec(
        form=Form.F1, code="F1", name="conditional rules", column="rules",
        description=(
            "conditional rules: short instructions that apply in a particular situation, each "
            "written as 'when <observable condition>, do <action>'; best for a recurring mistake "
            "with a recognisable trigger."),
    ),
    FormSpec(
        form=Form.F2, code="F2", name="worked examples", column="examples", needs_examples=True,
        description=(
            "worked examples: solved samples, each an input paired with its correct answer, copied "
            "verbatim from the offered solved samples to show the intended behaviour; best when "
            "the expected answer shape is easier to show than to describe."),
    ),
    FormSpec(
        form=Form.F3, code="F3", name="reasoning procedure", column="procedure",
        description=(
            "reasoning procedure: numbered steps for solving the task, including how to reason and "
            "how to check the answer, or a workflow of task operations (e.g. read the table, filter "
            "the rows, write the result); best when failures come from a wrong or skipped process."),
    ),
    FormSpec(
        form=Form.F4, code="F4", name="full rewrite", column="rewrite", rewrite=True,
        menu=FormMenu.F4,
        description=(
            "full rewrite: a new version of the whole skill that folds in the guidance, groups "
            "related instructions and resolves conflicting ones; best when the skill has grown "
            "inconsistent."),
    ),
)

_BY_FORM: Mapping[Form, FormSpec] = MappingProxyType({s.form: s for s in FORM_SPECS})
_BY_CODE: Mapping[str, FormSpec] = MappingProxyType({s.code: s for s in FORM_SPECS})
# a label as an optimizer writes it: "F2", "f 2", "F2 (worked examples)"
_LABEL = re.compile(r"\bF\s*(\d+)\b", re.I)


def form_spec(form: Form) -> FormSpec:
    return _BY_FORM[form]


def form_of_code(code: str) -> Form | None:
    """The form whose code is exactly `code` (case and surrounding spaces aside), else None."""
    found = _BY_CODE.get(code.strip().upper())
    return found.form if found is not None else None


def form_in_label(label: str) -> Form | None:
    """The first form code found in a free-text label ("<form>F 2 examples</form>"), else None."""
    for match in _LABEL.finditer(label):
        if (found := _BY_CODE.get(f"F{match.group(1)}")) is not None:
            return found.form
    return None


def menu_forms(menu: FormMenu) -> tuple[Form, ...]:
    """The forms the `forms` ablation `menu` offers: every form under `all`, else those whose
    spec names the menu."""
    if menu is FormMenu.ALL:
        return tuple(s.form for s in FORM_SPECS)
    return tuple(s.form for s in FORM_SPECS if s.menu is menu)
