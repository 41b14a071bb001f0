"""A run is identified by what decides its answers, not by how the models are reached: a rerun
may switch a finished or interrupted run to the Batch API, a longer timeout or another region."""

from __future__ import annotations

import pytest

from llm_cache.model_spec import without_transport
from replay.rundir.serde import Manifest, TaskSpec
from stratune_core.config.knobs import Config


def _manifest(target: str, optimizer: str = "anthropic:claude-sonnet-4-6", seed: int = 0) -> Manifest:
    return Manifest(task=TaskSpec(spec="demo"), target=target, optimizer=optimizer, seed=seed,
                    config=Config(seed=seed))


@pytest.mark.parametrize("spec, expected", [
    ("anthropic:claude-haiku-4-5", "anthropic:claude-haiku-4-5"),
    ("anthropic:claude-haiku-4-5?batch=on&timeout=60", "anthropic:claude-haiku-4-5"),
    ("bedrock:global.anthropic.claude-haiku-4-5-20251001-v1:0?region=us-east-1&bedrock_anthropic_version=bedrock-2023-05-31",
     "bedrock:global.anthropic.claude-haiku-4-5-20251001-v1:0"),
    ("llamacpp:m.gguf?threads=2&mode=reset&n_ctx=2048", "llamacpp:m.gguf?mode=reset&n_ctx=2048"),
    ("openai:qwen@http://h:8000/v1?concurrency=8", "openai:qwen@http://h:8000/v1"),
])
def test_transport_options_are_dropped_and_the_rest_kept(spec, expected):
    assert without_transport(spec) == expected


def test_a_transport_change_is_the_same_run():
    live = _manifest("anthropic:claude-haiku-4-5")
    batched = _manifest("anthropic:claude-haiku-4-5?batch=on&batch_min=4&timeout=120")
    assert live.run_identity() == batched.run_identity()


@pytest.mark.parametrize("other", [
    _manifest("anthropic:claude-sonnet-4-6"),                       # another target model
    _manifest("anthropic:claude-haiku-4-5", optimizer="anthropic:claude-opus-4-6"),
    _manifest("anthropic:claude-haiku-4-5", seed=1),
])
def test_a_model_or_seed_change_is_a_different_run(other):
    assert _manifest("anthropic:claude-haiku-4-5").run_identity() != other.run_identity()


def test_a_local_model_mode_change_is_a_different_run():
    reset = _manifest("llamacpp:m.gguf?mode=reset", optimizer="llamacpp:o.gguf?mode=reset")
    snapshot = _manifest("llamacpp:m.gguf?mode=snapshot", optimizer="llamacpp:o.gguf?mode=reset")
    assert reset.run_identity() != snapshot.run_identity()


def test_a_run_that_never_paid_a_call_may_restart_with_other_models(tmp_path):
    """A first call that fails (a model that cannot answer) leaves a run directory with a
    manifest and its first events but nothing paid: the command with other models runs there,
    and the result replays as if the failed attempt had never been."""
    import io

    from rich.console import Console

    from llm_cache.backends.function import FunctionBackend
    from llm_cache.errors import LLMFatalError
    from llm_cache.records import Role
    from replay.models import specs as models
    from replay.run import runner
    from replay.run.hooks import TrainHooks
    from replay.run.options import RunOptions
    from tests.support.cli import main, toy_extensions
    from tests.support.toy import ToyOptimizer

    def unreachable(_request: object) -> object:
        raise LLMFatalError("the model cannot be reached")

    out = tmp_path / "run"
    broken = RunOptions(task=TaskSpec(spec="toy", limit=24), target="scripted:broken-target",
                        optimizer="scripted:toy-optimizer")
    hooks = TrainHooks(backends={Role.TARGET: FunctionBackend(unreachable, name="broken"),
                                 Role.OPTIMIZER: FunctionBackend(ToyOptimizer(), name="opt")})
    console = Console(file=io.StringIO())
    with models.using(toy_extensions()):
        assert runner.train(broken, str(out), console, hooks=hooks) == runner.EXIT_FAILED
    assert (out / "manifest.json").is_file() and (out / "events.jsonl").read_text()
    fixed = ["train", "--task", "toy", "--limit", "24", "--target", "scripted:toy-target",
             "--optimizer", "scripted:toy-optimizer", "--out", str(out)]
    assert main(fixed) == 0
    assert main(["replay", str(out)]) == 0
