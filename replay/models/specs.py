"""Model specs and task specs as the CLI resolves them, plus the door for a program's own kinds.

The built-in model specs are those of `llm_cache.spec`; the built-in tasks those of
`replay.tasks.registry`. A program that embeds the CLI can add model kinds (a spec prefix with
its backend) and tasks (a name with its loader) through `Extensions` (`replay.models.extensions`), passed to
`replay.commands.app.main(argv, extensions=...)` or made active around library calls with `using(...)`.
The test suite injects its scripted models and toy task this way; the package ships none.

A spec string is resolved once where it enters (`resolve`, the shell's only call of
`parse_spec`), and the `Model` is passed down: every function here takes either.
"""

from __future__ import annotations

from pathlib import Path

from attrs import frozen

from llm_cache.backends import Backend, backend_for
from llm_cache.model_spec import ModelSpec
from llm_cache.providers import PROVIDERS
from llm_cache.records import Role
from llm_cache.spec import parse_spec
from replay.models.extensions import Extensions, ModelKind, active, using
from replay.models.redact import public_spec
from replay.rundir.serde import TaskSpec
from replay.skills.agent_skill import WithInitialSkill, read_skill_folder
from replay.skills.skill_parts import folder_document
from stratune_core.records.errors import ConfigError
from stratune_core.records.task import Task
from stratune_core.tasks.agent import Toolbox

# the extension door is part of this module's surface (`models.using(...)`), defined apart
__all__ = ["PROGRAM_MODELS", "Extensions", "Model", "ModelKind", "active", "backends",
           "build_backend", "canonical_model", "check_buildable", "load_task", "resolve", "using"]


def _run_by_its_program(body: str) -> Backend:
    raise ConfigError(f"model spec 'mlflow:{body}': the predict_fn of an MLflow "
                      "optimize_prompts call; only stratune.mlflow.StraTuneOptimizer, inside that "
                      "call, runs it (a recorded run replays with `stratune replay`)")


# Targets that are a function of the user's program (an optimize_prompts call's predict_fn): a
# run names them, so `replay` and `view` read it; only the program holding the function calls
# it, through the backend its bridge makes active (`Extensions`, looked up first).
PROGRAM_MODELS = {"mlflow": ModelKind(canonical=lambda body: f"mlflow:{body}",
                                      backend=_run_by_its_program)}


def _kind(spec: str) -> tuple[ModelKind, str] | None:
    """A program's own model kind, else a built-in one: a program's function (`mlflow:`) or a
    target kind's (`claude-code:`)."""
    prefix, sep, body = spec.partition(":")
    if not sep:
        return None
    kind = active().models.get(prefix) or PROGRAM_MODELS.get(prefix)
    if kind is None:
        from replay.targets.kinds import model_kinds

        kind = model_kinds().get(prefix)
    return None if kind is None else (kind, body)


@frozen(kw_only=True)
class Model:
    """A model spec string resolved: a program's or a target kind's own model (`kind`, read
    from `body`), or a provider's, parsed (`parsed`)."""

    text: str
    parsed: ModelSpec | None = None
    kind: ModelKind | None = None
    body: str = ""


def resolve(spec: str | Model) -> Model:
    """The spec resolved once, where it enters; a `Model` passes through unchanged. A spec no
    kind and no provider reads raises `SpecError` naming it."""
    if isinstance(spec, Model):
        return spec
    found = _kind(spec)
    if found is not None:
        kind, body = found
        return Model(text=spec, kind=kind, body=body)
    return Model(text=spec, parsed=parse_spec(spec))


def canonical_model(spec: str | Model) -> str:
    """The model id that goes into requests (and so into the cache key)."""
    model = resolve(spec)
    if model.kind is not None:
        return model.kind.canonical(model.body)
    assert model.parsed is not None
    return model.parsed.canonical


def build_backend(spec: str | Model) -> Backend:
    model = resolve(spec)
    if model.kind is not None:
        return model.kind.backend(model.body)
    assert model.parsed is not None
    return backend_for(model.parsed)


def check_buildable(spec: str | Model) -> None:
    """What a backend only finds out at its first call, checked before a run directory is
    made: a local model's GGUF file and the llama.cpp package it runs on, a Claude API key,
    an OpenAI-compatible server that accepts connections."""
    model = resolve(spec)
    if model.kind is not None:
        if model.kind.check is not None:
            model.kind.check(model.body)
        return
    parsed, public = model.parsed, public_spec(model.text)
    assert parsed is not None
    if parsed.provider != "llamacpp":
        PROVIDERS[parsed.provider].check_access(parsed, public)
        return
    from replay.models.local_model import llama_cpp_installed

    if not llama_cpp_installed():
        raise ConfigError(f"model spec {public!r}: local models need "
                          "llama-cpp-python: pip install 'stratune[local]'")
    path = Path(parsed.model).expanduser()
    if not path.is_file():
        raise ConfigError(f"model spec {public!r}: GGUF file {path} not found; fix "
                          "the path")


def backends(target: str | Model, optimizer: str | Model) -> dict[Role, Backend]:
    models = []
    for spec in (target, optimizer):  # each checked before the next is read, as typed
        models.append(model := resolve(spec))
        check_buildable(model)
    return {Role.TARGET: build_backend(models[0]), Role.OPTIMIZER: build_backend(models[1])}


def load_task(spec: TaskSpec, *, data_dir: str | None = None,
              toolbox: Toolbox | None = None) -> Task:
    """The task `spec` names; with `spec.skill`, the skill folder's body as its initial skill
    (the folder is checked first, so a bad one is refused before any data is read); run as
    its target kind runs an execution (`replay/targets/kinds.py`: with `spec.tools`, agent
    episodes, whose `toolbox` a replay takes from the manifest instead of the tools)."""
    skill = None if spec.skill is None else folder_document(read_skill_folder(spec.skill),
                                                             spec.skill_parts)
    loader = active().tasks.get(spec.spec)
    if loader is not None:
        task = loader(spec)
    else:
        from replay.tasks.registry import load_task as registry_load

        task = registry_load(spec.spec, data_dir=data_dir, scorer=spec.scorer,
                             placement=spec.placement, limit=spec.limit)
    from replay.targets.kinds import kind_of

    task = task if skill is None else WithInitialSkill(task, skill)
    return kind_of(spec).wrap(task, spec, toolbox)


def kind_backends(spec: TaskSpec, task: Task | None = None) -> dict[Role, Backend]:
    """The backends the task's target kind needs beside the target's and the optimizer's (an
    agent task's tools), or that the task itself offers (a DSPy program's own tools: its
    `tool_backend()`)."""
    from replay.targets.kinds import kind_of

    found = dict(kind_of(spec).backends(spec))
    own = getattr(task, "tool_backend", None)
    if callable(own) and (backend := own()) is not None:
        found[Role.TOOL] = backend
    return found
