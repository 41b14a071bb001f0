"""Bad input never surfaces as a traceback or a silent default.

Malformed task files and configs give a `StraTuneError` whose one-line message names the file or
field; unusable optimizer replies become recorded fallbacks or rejections; an empty training set
or a budget below one batch is refused up front.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import stratune_core.state.events as ev
from llm_cache.records import CallKind, Request, Response, Usage
from replay.run.options import RunOptions, build_config
from replay.rundir.serde import TaskSpec
from replay.tasks.registry import load_task
from stratune_core.config.knobs import Config
from stratune_core.records.enums import Reason
from stratune_core.records.errors import StraTuneError
from stratune_core.round.run import run
from stratune_core.selection.selectors.registry import SELECTORS
from tests.support.toy import InProcessLLM, ToyOptimizer, ToyTask

SETTINGS = settings(max_examples=60, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


def assert_one_line(exc: BaseException, *names: str) -> None:
    message = str(exc)
    assert message and "\n" not in message and "Traceback" not in message, message
    for name in names:
        assert name in message, f"{name!r} not named in: {message}"


# ---- custom task files ------------------------------------------------------------------------

def _rows(n_train: int, n_test: int) -> list[dict[str, Any]]:
    return [{"id": f"q{i}", "input": f"What is {i} + 1?", "expected": str(i + 1),
             "split": "train" if i < n_train else "test"} for i in range(n_train + n_test)]


NOT_STR = st.one_of(st.none(), st.integers(), st.floats(allow_nan=False), st.lists(st.integers(), max_size=2),
                    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2))
NOT_ID = st.one_of(st.none(), st.floats(allow_nan=False), st.lists(st.text(max_size=3), max_size=2),
                   st.dictionaries(st.text(max_size=3), st.integers(), max_size=2), st.just(""))
NOT_EXPECTED = st.one_of(st.none(), st.dictionaries(st.text(max_size=3), st.integers(), max_size=2))
NOT_SPLIT = st.text(max_size=8).filter(lambda s: s not in ("train", "test"))
NOT_STRATUM = st.one_of(st.just(""), st.integers(), st.lists(st.text(max_size=2), max_size=2))
NOT_JSON = st.text(min_size=1, max_size=30).filter(lambda s: s.strip() and not _is_json(s))
NOT_OBJECT = st.one_of(st.integers(), st.text(max_size=5), st.lists(st.integers(), max_size=3),
                       st.booleans())


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def _set(key: str, values: st.SearchStrategy) -> st.SearchStrategy[Callable[[list], None]]:
    def mutate(value: Any) -> Callable[[list], None]:
        return lambda rows, i: rows[i].__setitem__(key, value)
    return values.map(mutate)


def _drop(key: str) -> st.SearchStrategy:
    return st.just(lambda rows, i: rows[i].pop(key))


def _replace(values: st.SearchStrategy) -> st.SearchStrategy:
    return values.map(lambda v: lambda rows, i: rows.__setitem__(i, v))


def _duplicate_id(rows: list, i: int) -> None:
    rows[i]["id"] = rows[(i + 1) % len(rows)]["id"]


def _no_train(rows: list, _i: int) -> None:
    for row in rows:
        row["split"] = "test"


MUTATIONS = st.one_of(
    _set("id", NOT_ID), _set("input", NOT_STR), _set("expected", NOT_EXPECTED),
    _set("split", NOT_SPLIT), _set("stratum", NOT_STRATUM),
    _drop("id"), _drop("input"), _drop("expected"), _drop("split"),
    _replace(NOT_OBJECT.map(json.dumps)), _replace(NOT_JSON.map(lambda t: ("raw", t))),
    st.just(_duplicate_id), st.just(_no_train),
)


def _write(path: Path, rows: list) -> None:
    lines = []
    for row in rows:
        if isinstance(row, tuple):  # ("raw", text): a line that is not JSON at all
            lines.append(row[1].replace("\n", " "))
        elif isinstance(row, str):  # already-encoded JSON that is not an object
            lines.append(row)
        else:
            lines.append(json.dumps(row))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


@SETTINGS
@given(mutate=MUTATIONS, n_train=st.integers(1, 4), n_test=st.integers(1, 3), at=st.integers(0, 50))
def test_malformed_task_file_names_the_file_in_one_line(mutate, n_train, n_test, at):
    rows: list[Any] = _rows(n_train, n_test)
    mutate(rows, at % len(rows))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "task.jsonl"
        _write(path, rows)
        with pytest.raises(StraTuneError) as caught:
            load_task(str(path))
    assert_one_line(caught.value, "task.jsonl")


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=6,
)
ROW_LIKE = st.fixed_dictionaries(
    {}, optional={"id": JSON_VALUES, "input": JSON_VALUES, "expected": JSON_VALUES,
                  "split": st.sampled_from(["train", "test"]) | JSON_VALUES,
                  "stratum": JSON_VALUES})


@SETTINGS
@given(rows=st.lists(ROW_LIKE | JSON_VALUES, min_size=0, max_size=5))
def test_arbitrary_task_lines_load_or_fail_cleanly(rows):
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "fuzz.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        try:
            task = load_task(str(path))
        except StraTuneError as exc:
            assert_one_line(exc, "fuzz.jsonl")
            return
    assert task.split("train") and task.split("test")


# ---- configs ----------------------------------------------------------------------------------

POSITIVE = ("budget", "budget_multiplier", "n_batches", "max_rounds", "delta", "z",
            "validation_frac", "n_candidates_i1", "i3_k", "i3_submit_max", "ranking_size",
            "max_edits", "optimizer_max_tokens")
NON_NEGATIVE = ("eps0", "eps_v", "screen_solved", "screen_random", "validation_min", "reserve")
CHOICES = ("selector", "forms", "operator")


@SETTINGS
@given(data=st.data())
def test_out_of_range_config_values_are_config_errors(data):
    name = data.draw(st.sampled_from(POSITIVE + NON_NEGATIVE + CHOICES))
    if name in POSITIVE:
        value = data.draw(st.integers(max_value=0) | st.floats(max_value=0, allow_nan=False))
    elif name in NON_NEGATIVE:
        value = data.draw(st.integers(max_value=-1) | st.floats(max_value=-1e-9, allow_nan=False))
    else:
        value = data.draw(st.text(max_size=12).filter(
            lambda s: s not in ("all", "F4") and "+" not in s
            and s.partition(":")[0] not in {cls.name for cls in SELECTORS}))
    with pytest.raises(StraTuneError) as caught:
        Config(**{name: value})
    assert_one_line(caught.value, name)


def _options(config_file: Path) -> RunOptions:
    return RunOptions(task=TaskSpec(spec="demo"), target="scripted:t", optimizer="scripted:o",
                      config_file=str(config_file))


NUMBER_FIELDS = POSITIVE + NON_NEGATIVE + ("seed", "lb_limit", "rewrite_factor")
NOT_A_NUMBER = st.one_of(st.lists(st.integers(), max_size=2), st.dictionaries(
    st.text(max_size=3), st.integers(), max_size=2), st.text(max_size=6).filter(
    lambda s: not _is_json(s.strip() or "x")))


@SETTINGS
@given(data=st.data())
def test_config_file_with_wrong_values_is_refused_in_one_line(data):
    """Unknown keys, non-objects, unparseable JSON and non-numbers for numbers."""
    choice = data.draw(st.sampled_from(("unknown", "not-object", "not-json", "not-number")))
    if choice == "unknown":
        key = data.draw(st.text(st.characters(categories=("L", "N", "P")), min_size=1,
                                max_size=10).filter(lambda k: k not in attrs.fields_dict(Config)))
        text = json.dumps({key: 1})
    elif choice == "not-object":
        text = json.dumps(data.draw(NOT_OBJECT))
    elif choice == "not-json":
        text = data.draw(NOT_JSON)
    else:
        text = json.dumps({data.draw(st.sampled_from(NUMBER_FIELDS)): data.draw(NOT_A_NUMBER)})
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "cfg.json"
        path.write_text(text, encoding="utf-8")
        with pytest.raises(StraTuneError) as caught:
            build_config(_options(path))
    assert_one_line(caught.value, "cfg.json")


def test_unknown_key_with_a_newline_stays_one_line(tmp_path):
    path = tmp_path / "cfg.json"
    path.write_text(json.dumps({"bad\nkey": 1}), encoding="utf-8")
    with pytest.raises(StraTuneError) as caught:
        build_config(_options(path))
    assert_one_line(caught.value, "cfg.json")


COERCED = [("history", "no"), ("validation", 0), ("final_selection", "false"),
           ("n_batches", 1.5), ("n_batches", True), ("budget", "12"), ("z", "1.2")]


@pytest.mark.parametrize(("name", "value"), COERCED)
def test_config_file_values_of_the_wrong_json_type_are_not_coerced(tmp_path, name, value):
    path = tmp_path / "cfg.json"
    path.write_text(json.dumps({name: value}), encoding="utf-8")
    with pytest.raises(StraTuneError) as caught:
        build_config(_options(path))
    assert_one_line(caught.value, "cfg.json", name)


def test_negative_seed_is_a_config_error():
    with pytest.raises(StraTuneError) as caught:
        Config(seed=-1)
    assert_one_line(caught.value, "seed")


# ---- training set and budget ----------------------------------------------------------------


def test_empty_training_set_is_a_clear_error():
    with pytest.raises(StraTuneError) as caught:
        run(Config(), ToyTask(n_train=0), InProcessLLM())
    assert_one_line(caught.value, "train")


@SETTINGS
@given(n_train=st.integers(12, 96), n_batches=st.integers(1, 6), data=st.data())
def test_budget_below_one_batch_is_a_clear_error(n_train, n_batches, data):
    smallest_batch = n_train // n_batches
    budget = data.draw(st.integers(1, smallest_batch - 1))
    llm = InProcessLLM()
    with pytest.raises(StraTuneError) as caught:
        run(Config(budget=budget, n_batches=n_batches), ToyTask(n_train=n_train), llm)
    assert_one_line(caught.value, "budget")
    assert llm.calls == [], "nothing may be spent before the budget is checked"


# ---- optimizer replies --------------------------------------------------------------------------


class _Optimizer:
    """The toy optimizer, with selection and/or generation replies replaced."""

    def __init__(self, selection: str | None = None, generation: str | None = None) -> None:
        self.base = ToyOptimizer(style="good")
        self.selection, self.generation = selection, generation

    def __call__(self, request: Request) -> Response:
        is_selection = request.kind is CallKind.STRATEGY_SELECTION
        text = self.selection if is_selection else self.generation
        if text is None:
            return self.base(request)
        return Response(text=text, usage=Usage(input_tokens=1, output_tokens=1))


def _events(optimizer: _Optimizer, cls: type, **config: Any) -> list:
    result = run(Config(seed=1, **config), ToyTask(), InProcessLLM(optimizer=optimizer))
    assert isinstance(result.events[-1], ev.RunFinished)
    return [e for e in result.events if isinstance(e, cls)]


@pytest.mark.parametrize("reply", [
    "I would pick iterative refinement.",  # not JSON
    '{"strategy": "I9", "form": "F1", "why": "new"}',  # unknown strategy
    '{"strategy": "I2", "form": "F7", "why": "new"}',  # unknown form
    '{"strategy": ["I1"], "form": null}',  # wrong types
    "",
])
def test_unusable_selection_replies_are_recorded_fallbacks(reply):
    chosen = [e for e in _events(_Optimizer(selection=reply), ev.OperatorChosen)
              if e.source != "first-round"]
    assert chosen, "later rounds ask the optimizer"
    assert all(e.fallback and e.detail for e in chosen)


@pytest.mark.parametrize(("reply", "reason"), [
    ("No candidate today.", Reason.UNPARSEABLE),
    ("<candidate>\n<form>F1</form>\n<theme>x</theme>\n<edit op=\"replace\"><old>not in the skill"
     "</old><new>y</new></edit>\n</candidate>", Reason.INVALID_PATCH),
    ("<candidate>\n<form>F1</form>\n<theme>x</theme>\n<edit op=\"explode\">boom</edit>\n"
     "</candidate>", None),
])
def test_unusable_candidates_are_recorded_rejections(reply, reason):
    invalid = _events(_Optimizer(generation=reply), ev.CandidateInvalid, operator="I1+F1")
    assert invalid
    if reason is not None:
        assert {e.reason for e in invalid} == {reason}
    assert all(e.detail for e in invalid)
