"""A model spec is parsed once, where it enters, into a typed `ModelSpec` that is passed down
(issue 51): `llm_cache.spec.parse_spec` is called only at the edges listed here, and one run's
config, manifest and backends parse each of its two specs once."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from llm_cache.errors import SpecError
from llm_cache.spec import parse_spec
from replay.models import specs as models
from replay.run.options import RunOptions, build_config, manifest_spec, new_manifest
from replay.rundir.serde import TaskSpec

ROOT = Path(__file__).resolve().parent.parent
PRODUCT = ("stratune", "stratune_core", "llm_cache", "replay")

# module -> its calls of parse_spec, and why it is an edge
EDGES = {
    # the model layer's own API: `backend_for("anthropic:...")` from benchmarks and programs
    "llm_cache/backends/__init__.py": 1,
    # the shell's one door: `resolve`, whose `Model` the commands, runs and grid pass down
    "replay/models/specs.py": 1,
    # a `claude-code:` spec's body names an Anthropic model, checked as one where it is read
    "replay/harness/spec.py": 1,
}


def _imports_parse_spec(tree: ast.Module) -> set[str]:
    """The local names bound to `llm_cache.spec.parse_spec`, or to the module `llm_cache.spec`."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "llm_cache.spec":
            names.update(a.asname or a.name for a in node.names if a.name == "parse_spec")
        elif isinstance(node, ast.ImportFrom) and node.module == "llm_cache":
            names.update(a.asname or a.name for a in node.names if a.name == "spec")
        elif isinstance(node, ast.Import):
            names.update(a.asname or a.name for a in node.names if a.name == "llm_cache.spec")
    return names


def parse_calls(source: str) -> int:
    """How many calls of `llm_cache.spec.parse_spec` a module's source makes."""
    tree = ast.parse(source)
    bound = _imports_parse_spec(tree)
    calls = [node.func for node in ast.walk(tree) if isinstance(node, ast.Call)]
    by_name = [f for f in calls if isinstance(f, ast.Name) and f.id in bound]
    by_attribute = [f for f in calls if isinstance(f, ast.Attribute) and f.attr == "parse_spec"]
    return len(by_name) + (len(by_attribute) if bound else 0)


def test_parse_spec_is_called_only_at_the_edges() -> None:
    found = {}
    for top in PRODUCT:
        for path in sorted((ROOT / top).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if rel != "llm_cache/spec.py" and (n := parse_calls(path.read_text("utf-8"))):
                found[rel] = n
    assert found == EDGES


def test_the_walk_sees_every_spelling_of_a_call() -> None:
    assert parse_calls("from llm_cache.spec import parse_spec\nparse_spec('a')\n") == 1
    assert parse_calls("from llm_cache.spec import parse_spec as p\np('a')\np('b')\n") == 2
    assert parse_calls("import llm_cache.spec\nllm_cache.spec.parse_spec('a')\n") == 1
    assert parse_calls("from llm_cache import spec\nspec.parse_spec('a')\n") == 1
    # replay/tasks/reasoning_gym.py has a parse_spec of its own: not the model spec's
    assert parse_calls("def parse_spec(s): ...\nparse_spec('a')\n") == 0


def test_a_run_parses_each_spec_once(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[str] = []

    def counting(spec: str):
        seen.append(spec)
        return parse_spec(spec)

    monkeypatch.setattr(models, "parse_spec", counting)
    target = "bedrock:global.anthropic.claude-haiku-4-5-20251001-v1:0?region=eu-west-1&api_key=k"
    optimizer = "anthropic:claude-sonnet-4-6?api_key=k"
    options = RunOptions(task=TaskSpec(spec="demo"), target=target, optimizer=optimizer)
    config = build_config(options)
    manifest = new_manifest(options, config)
    backends = models.backends(options.target_model, options.optimizer_model)
    assert seen == [target, optimizer]
    assert config.target_model == "claude-haiku-4-5-20251001" and manifest.optimizer == optimizer
    assert "bedrock_anthropic_version=" in manifest.target and len(backends) == 2


def test_strings_are_still_taken_where_a_spec_enters() -> None:
    spec = "anthropic:claude-haiku-4-5"
    model = models.resolve(spec)
    assert models.resolve(model) is model and model.parsed == parse_spec(spec)
    assert models.canonical_model(spec) == models.canonical_model(model) == "claude-haiku-4-5-20251001"
    assert model.parsed is not None and model.parsed.text == spec
    # a program's own kind is not parsed and is recorded as typed
    own = models.resolve("mlflow:predict")
    assert own.parsed is None and manifest_spec(own) == "mlflow:predict"
    with pytest.raises(SpecError, match="unknown provider"):
        models.resolve("nosuch:model")


def test_a_grid_limits_the_endpoint_of_each_resolved_spec() -> None:
    from llm_cache.records import Role
    from replay.grid.limits import endpoint_of

    def options(target: str) -> RunOptions:
        return RunOptions(task=TaskSpec(spec="demo"), target=target, optimizer="anthropic:m")

    assert endpoint_of(options("openai:m@http://gpu:8000/v1"), Role.TARGET) == (
        "openai:http://gpu:8000/v1")
    assert endpoint_of(options("openai:m@http://gpu:8000/v1"), Role.OPTIMIZER) == "anthropic"
    assert endpoint_of(options("mlflow:predict"), Role.TARGET) == "mlflow"  # a program's kind
    # a kind this process does not know (a Ray worker without the program's extensions)
    assert endpoint_of(options("scripted:toy"), Role.TARGET) == "scripted"
