"""The patch-format example of an F2 request is made of an offered solved sample: a weak
optimizer that copies the example instead of filling it in still writes a grounded F2 edit."""

from __future__ import annotations

import re

from stratune_core.feedback.execution import FailureCase, Feedback
from stratune_core.operators.forms import OfferedExample
from stratune_core.operators.patches import parse_candidates
from stratune_core.prompts.templates import generation_prompt
from stratune_core.records.enums import Form, Reason
from stratune_core.round.candidates import Checked, Refused, check_candidate

SKILL = "Write the date the text gives as YYYY-MM-DD. Reply with the date only."
EXAMPLES = (
    OfferedExample(sample_id="train-slash-00",
                   line="[train-slash-00] Text: Inspected on 09/12/2025. -> 2025-12-09"),
    OfferedExample(sample_id="train-dotted-00",
                   line="[train-dotted-00] Text: Reopens on 03.06.2023. -> 2023-06-03"),
)


def feedback(examples: tuple[OfferedExample, ...] = EXAMPLES) -> Feedback:
    failure = FailureCase(sample_id="train-short-year-01", input="Text: Paid on 21-Jul-22.",
                          output="21-07-22", expected="2022-07-21", summary="wrong", score=0.0)
    return Feedback(skill_id="s", batch_ids=["train-short-year-01", "train-slash-00"],
                    failures=[failure], n_solved=1, mean_score=0.5, examples=examples)


def prompt(forms: tuple[Form, ...], fb: Feedback | None = None) -> str:
    return generation_prompt(skill_text=SKILL, feedback=fb or feedback(), forms=forms,
                             n_candidates=1, max_edits=6, budget=8_000)


def format_example(text: str) -> str:
    """The `<candidate>` block the prompt shows as the format to write in."""
    found = re.search(r"exactly this format \(plain text, no JSON\):\n(<candidate>.*?</candidate>)",
                      text, re.S)
    assert found, text
    return found.group(1)


def check(reply: str, forms: tuple[Form, ...]) -> Checked | Refused:
    (raw,) = parse_candidates(reply)
    return check_candidate(raw, raw.form, forms=forms, parent=SKILL, examples=EXAMPLES,
                           max_edits=6, rewrite_factor=4, rewrite_slack_chars=10_000)


def test_an_F2_request_shows_an_edit_made_of_the_first_offered_sample():
    example = format_example(prompt((Form.F2,)))
    assert "<sources>train-slash-00</sources>" in example
    assert EXAMPLES[0].line in example and "text added at the end" not in example


def test_copying_the_F2_format_example_verbatim_is_a_grounded_candidate():
    checked = check(format_example(prompt((Form.F2,))), (Form.F2,))
    assert isinstance(checked, Checked), checked
    assert checked.used_examples == {"train-slash-00"}
    assert checked.text.splitlines()[-1] == EXAMPLES[0].line


def test_the_placeholder_copied_into_F2_is_refused_as_ungrounded():
    """What every F2 draft of the recorded runs before prompt version 6 did."""
    reply = ("<candidate>\n<form>F2</form>\n<theme>t</theme>\n<sources>x</sources>\n"
             '<edit op="append">\ntext added at the end of the skill\n</edit>\n</candidate>')
    refused = check(reply, (Form.F2,))
    assert isinstance(refused, Refused) and refused.reason is Reason.UNGROUNDED_EXAMPLE


def test_other_forms_and_an_F2_request_without_samples_keep_the_placeholder():
    for text in (prompt((Form.F1,)), prompt((Form.F1, Form.F2, Form.F3, Form.F4)),
                 prompt((Form.F2,), feedback(examples=()))):
        example = format_example(text)
        assert "text added at the end of the skill" in example
        assert "ids of offered examples you copied" in example
    assert "<rewrite>" in format_example(prompt((Form.F4,)))


# ---- which solved samples are offered: those of the failures' strata first ------------------

def _dates_world(fails_too: int | None = None):
    """The bundled dates task; the skill fails every slash sample (and train[fails_too])."""
    from replay.tasks.registry import load_task
    from stratune_core.budget.ledger import Ledger
    from stratune_core.records.base import Execution

    task = load_task("dates", limit=10)
    train = task.split("train")
    failed = {x.id for x in train if x.stratum == "slash"}
    if fails_too is not None:
        failed.add(train[fails_too].id)
    ledger = Ledger.of(Execution(skill_id="s", sample_id=x.id, score=float(x.id not in failed),
                                 solved=x.id not in failed) for x in train)
    return task, train, ledger


def _offered(task, train, ledger, batch, failures):
    from stratune_core.feedback.execution import offered_examples

    return [e.sample_id for e in offered_examples(
        task=task, skill_id="s", batch_ids=batch, failure_ids=failures, ledger=ledger,
        samples={x.id: x for x in train}, max_examples=3, train_order=[x.id for x in train])]


def test_solved_samples_of_a_failing_stratum_are_offered_before_the_batchs_own():
    task, train, ledger = _dates_world(fails_too=1)
    assert [x.stratum for x in train[:6]] == ["slash", "dotted", "day-month", "month-day",
                                              "short-year", "slash"]
    assert train[6].stratum == "dotted"
    batch = [train[2].id, train[3].id, train[1].id]  # day-month, month-day solved; dotted failed
    offered = _offered(task, train, ledger, batch, failures=[train[1].id])
    assert offered == [train[6].id, train[2].id, train[3].id]  # the solved dotted one first


def test_without_a_solved_sample_of_the_failing_stratum_the_batchs_come_first():
    task, train, ledger = _dates_world()
    batch = [train[2].id, train[3].id, train[0].id]  # the slash one fails; no slash is solved
    offered = _offered(task, train, ledger, batch, failures=[train[0].id])
    assert offered == [train[2].id, train[3].id, train[1].id]
