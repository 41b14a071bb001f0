"""The registry of methods: every `Method` has one entry, and every reader (the command line's
options and settings, `compare`'s labels, `plan`'s estimate, the budget check, the manifest's
prompt version and packages) answers for every entry from it."""

from __future__ import annotations

import argparse

import pytest

from replay.compare.runs import BASELINE_LABELS, HYBRID_LABELS, METHOD
from replay.plan.method_plan import render_method_plan
from replay.run.method_options import check_budget, extra_options, method_from_args, settings_of
from replay.run.provenance import package_versions
from stratune_core.config.knobs import Config
from stratune_core.records.method_spec import SPECS, Generator, Method, StraTuneMethod
from stratune_core.round.registry import (
    METHODS,
    entry_of,
    hybrid_label,
    packages_of,
    prompt_version_of,
)
from tests.support.toy import ToyTask

ENTRIES = list(METHODS.values())


def test_every_method_and_settings_record_has_exactly_one_entry():
    assert set(METHODS) == set(Method)
    assert {e.spec for e in ENTRIES} == set(SPECS)
    assert all(e.spec.method is m for m, e in METHODS.items())
    assert len({e.label for e in ENTRIES}) == len(ENTRIES)


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: e.method.value)
def test_every_entry_answers_every_reader(entry):
    spec = entry.spec()
    assert entry_of(spec) is entry
    args = argparse.Namespace(method=entry.method.value, generator=None)
    assert method_from_args(args) == spec  # the command line builds its settings record
    assert prompt_version_of(spec) == entry.prompt_version and entry.prompt_version.isdigit()
    assert settings_of(spec) == entry.config_fields
    assert extra_options(entry.method) <= {flag for flag in extra_options(Method.STRATUNE)}
    assert packages_of(spec) == entry.packages
    names = {p.name for p in package_versions(spec)}
    assert set(entry.packages) <= names
    label = METHOD if entry.method is Method.STRATUNE else BASELINE_LABELS[entry.method]
    assert label == entry.label
    task, config = ToyTask(), Config()
    if entry.estimate is None:  # StraTune: the plan is the run's own shape
        assert entry.minimum_budget is None and entry.method is Method.STRATUNE
        return
    n = len(task.split("train"))
    guess = entry.estimate(spec, n, config.budget_for(n))
    assert 0 < guess.target_executions <= config.budget_for(n)
    assert entry.minimum_budget is not None
    need = entry.minimum_budget(spec, n)
    check_budget(spec, need, n)  # the smallest budget that makes a step is accepted ...
    if need > 1:
        with pytest.raises(Exception, match=f"at least {need}"):
            check_budget(spec, need - 1, n)  # ... one less is refused, naming it
    assert "plan for --method" in str(render_method_plan(spec, config, task).title)


@pytest.mark.parametrize("generator", list(Generator))
def test_a_hybrid_takes_its_label_and_packages_from_its_generators_method(generator):
    spec = StraTuneMethod(generator=generator)
    source = METHODS[Method(generator.value)]
    assert hybrid_label(spec) == source.hybrid == HYBRID_LABELS[source.method]
    assert packages_of(spec) == source.packages
    assert prompt_version_of(spec) == METHODS[Method.STRATUNE].prompt_version


def _named_in_code(path, word):
    """Whether `word` occurs in `path` outside comments and docstrings."""
    import io
    import re
    import tokenize
    rx, prev = re.compile(word, re.I), tokenize.NEWLINE
    for tok in tokenize.generate_tokens(io.StringIO(path.read_text()).readline):
        if rx.search(tok.string) and tok.type != tokenize.COMMENT and not (
                tok.type == tokenize.STRING and prev in (tokenize.NEWLINE, tokenize.INDENT,
                                                         tokenize.DEDENT, tokenize.NL)):
            return True
        if tok.type not in (tokenize.COMMENT, tokenize.NL):
            prev = tok.type
    return False


def test_the_adding_a_method_recipe_names_the_files_a_method_touches():
    import re
    from pathlib import Path
    root = Path(__file__).resolve().parent.parent
    text = (root / "docs/baselines.md").read_text()
    recipe = text[text.index("## Adding a method"):]
    listed = set(re.findall(r"`(stratune_core/[\w/]+\.py)`", recipe.split("\n## ")[0]))
    assert all((root / p).is_file() for p in listed)
    # Trace2Skill, the method with no hybrid and no package, is named nowhere else in code
    named = {str(p.relative_to(root)) for d in ("stratune_core", "llm_cache", "replay")
             for p in (root / d).rglob("*.py") if _named_in_code(p, "trace2skill")}
    assert "stratune_core/methods/trace2skill.py" in named
    assert {p for p in named - listed if not p.startswith("stratune_core/methods/trace2skill")} \
        == set()


@pytest.mark.parametrize("generator", list(Generator))
def test_every_generator_has_its_methods_candidate_generation(generator):
    entry = METHODS[Method(generator.value)]
    assert entry.propose is not None and entry.hybrid is not None


def test_each_methods_own_events_join_the_trace_and_the_viewer_once():
    """Every view's event is in the trace's union once, the viewer's log shows its line, and
    the progress display counts exactly the events the views mark as steps."""
    from replay.viewer import event_line
    from stratune_core.records.method_events import STEP_EVENTS as SHARED
    from stratune_core.round.registry import EVENT_VIEWS, STEP_EVENTS, TRACE_EVENT_TYPES
    from stratune_core.state.events import EVENT_TYPES
    views = [v for e in ENTRIES for v in e.events]
    assert len({v.event for v in views}) == len(views)
    assert not set(EVENT_VIEWS) & set(EVENT_TYPES)  # a method's own event lives with it
    assert len(set(TRACE_EVENT_TYPES)) == len(TRACE_EVENT_TYPES)
    assert set(STEP_EVENTS) == set(SHARED) | {v.event for v in views if v.step}
    for view in views:
        assert view.event.__module__.startswith("stratune_core.methods.")
        assert event_line.dispatch(view.event) is not event_line.dispatch(object)


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: e.method.value)
def test_the_shells_notes_read_each_entrys_own_causes_and_target_calls(entry):
    """A stop note and compare's token notes name what the entry says, and nothing is lost."""
    from replay.compare.tokens import TARGET_CALLS
    from replay.stops.notes import stop_note
    for reason, note in entry.stop_notes:
        assert f"Under --method {entry.method.value}: {note}" in (stop_note(reason) or "")
    if entry.target_writes is not None:
        assert entry.target_writes in TARGET_CALLS
    assert TARGET_CALLS.startswith("executions")
