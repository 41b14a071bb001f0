"""The operator ablations as config values: a fixed revision operator o_t = (strategy, form) and
the form menu (paper §4.1). Parsed from their command-line spellings once, at the edge."""

from __future__ import annotations

from typing import TYPE_CHECKING

from attrs import frozen

from stratune_core.records.enums import Form, FormMenu, Strategy
from stratune_core.records.errors import ConfigError
from stratune_core.records.form_spec import form_spec, menu_forms

if TYPE_CHECKING:
    from stratune_core.feedback.execution import Feedback


@frozen(kw_only=True)
class Operator:
    """A fixed operator, spelt `STRATEGY+FORM` (`I3+F1`): no selection call is made at all."""

    strategy: Strategy
    form: Form

    def __str__(self) -> str:
        return f"{self.strategy.value}+{self.form.value}"


def parse_operator(text: str) -> Operator:
    parts = text.split("+") if isinstance(text, str) else ()
    if len(parts) == 2 and parts[0] in Strategy.__members__ and parts[1] in Form.__members__:
        return Operator(strategy=Strategy[parts[0]], form=Form[parts[1]])
    raise ConfigError(f"operator: {text!r:.40} is not STRATEGY+FORM such as 'I3+F3'")


def to_operator(value: Operator | str | None) -> Operator | None:
    """Config's converter: None (the selector decides), a record, or a spelling."""
    if value is None or isinstance(value, Operator):
        return value
    return parse_operator(value)


def to_form_menu(value: FormMenu | str) -> FormMenu:
    try:
        return FormMenu(value)
    except ValueError:
        names = " or ".join(repr(m.value) for m in FormMenu)
        raise ConfigError(f"forms: unknown value {value!r:.40}; use {names}") from None


def available_forms(menu: FormMenu, feedback: Feedback | None,
                    resting: Form | None = None) -> tuple[Form, ...]:
    """The forms a round may use: a menu of one form offers it alone; under `all`, a form that
    needs examples (F2) needs solved samples to copy from, and `resting` (the form whose
    candidates were all refused last round, `rest_refused_form`) sits this round out unless it
    is the only one left."""
    if menu is not FormMenu.ALL:
        return menu_forms(menu)
    has_examples = feedback is not None and bool(feedback.examples)
    forms = tuple(f for f in menu_forms(menu) if not form_spec(f).needs_examples or has_examples)
    rested = tuple(f for f in forms if f is not resting)
    return rested or forms
