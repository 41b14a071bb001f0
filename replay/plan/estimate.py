"""`stratune plan`: what a budget affords before anything is spent.

The budget, reserve and set sizes are the run's own (`stratune_core/config/shape.py`); rounds and costs
are estimates from them, not a dry run: a round costs its batch (new executions of the current
skill) plus the screening of each submitted candidate, plus validation for those that pass;
I2/I3 add the ranking subset for their drafts. The cheapest round submits one candidate that
fails screening; the dearest submits the most candidates and validates all of them. The
smallest budgets for 1 and 3 rounds are exact: they are what the run itself requires before a
round starts (`RunShape.smallest_budget`).
"""

from __future__ import annotations

from typing import Any

from attrs import frozen
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from llm_cache.prices import FREE, default_prices
from llm_cache.records import Usage
from replay.models.specs import load_task
from replay.run.options import Layers, RunOptions, configure
from replay.tasks.registry import BENCHMARKS
from stratune_core.config.knobs import Config
from stratune_core.config.layers import preset_layer, task_layer
from stratune_core.config.profiles import profile
from stratune_core.config.serde import unstructure
from stratune_core.config.shape import RunShape, run_shape
from stratune_core.records.task import Task
from stratune_core.tasks.agent import AgentTask

OPTIMIZER_CALLS_PER_ROUND = 2  # strategy selection + candidate generation
OPTIMIZER_OVERHEAD_TOKENS = 3000  # prompt scaffolding, feedback and history, on top of the skill
OPTIMIZER_OUTPUT_TOKENS = 1500
EPISODE_TURNS = 2  # an agent episode's typical model calls: a tool call, then the answer
TURN_GROWTH_TOKENS = 120  # a call and its result added to the conversation
CHARS_PER_TOKEN = 4


@frozen(kw_only=True)
class Plan:
    shape: RunShape  # budget, reserve and set sizes, as the run will use them
    rounds_low: int
    rounds_high: int
    rounds_typical: int
    target_usage: Usage
    optimizer_usage: Usage
    target_cost: float | None
    optimizer_cost: float | None
    screen_quota: int  # screen_solved + screen_random
    validation_wanted: int  # |Q_v| the config asks for, before a small training set caps it
    local_optimizer: str | None = None  # the optimizer's model id when it runs locally
    max_unusable_rounds: int | None = None
    # an agent episode's model calls: typically a call and an answer, at most --max-turns
    turns: int = 1
    max_turns: int = 1

    @property
    def warnings(self) -> tuple[str, ...]:
        """Every warning: the budget's (at most one), then a local optimizer's."""
        found = [w for w in (self.warning, self.optimizer_warning) if w is not None]
        return tuple(found)

    @property
    def optimizer_warning(self) -> str | None:
        if self.local_optimizer is None:
            return None
        head = (f"the optimizer {self.local_optimizer} is a local model: small ones often "
                "cannot follow the candidate format")
        if self.max_unusable_rounds is None:
            return (f"{head}, and max_unusable_rounds is off: the run would keep asking it to "
                    "the end of the budget; set it (e.g. 3) or use a stronger optimizer")
        return (f"{head}; the run stops after {self.max_unusable_rounds} rounds in a row "
                "without a usable candidate (max_unusable_rounds); a stronger optimizer avoids it")

    @property
    def warning(self) -> str | None:
        one = self.shape.smallest_budget(1)
        if self.shape.budget < one:
            return (f"the budget cannot pay for one round: `stratune train` refuses it; use "
                    f"--budget {one} or more ({self.shape.smallest_budget(3)} for 3 rounds)")
        if self.rounds_typical < 3:
            return (f"the budget affords about {self.rounds_typical} round(s); StraTune needs at "
                    "least 3 to choose between strategies: raise --budget")
        quota = self.screen_quota
        if 2 * self.shape.screening < quota:
            return (f"the training set is small: a candidate is screened on at most "
                    f"{self.shape.screening} samples instead of {quota} (the batch and the "
                    "validation set need the others), so gains and regressions are coarse; add "
                    "training samples")
        if self.shape.validation < self.validation_wanted:
            return (f"the training set is small: a candidate that passes screening is validated "
                    f"on at most {self.shape.validation} samples instead of "
                    f"{self.validation_wanted} (the batch and the screening set need the "
                    "others), so validation is coarse; add training samples")
        return None


def make_plan(config: Config, task: Task) -> Plan:
    train = task.split("train")
    shape = run_shape(config, len(train))
    batch, screening, validation = shape.batch, shape.screening, shape.validation
    submitted = max(config.n_candidates_i1, config.i3_submit_max)
    cheap = shape.round_cost
    dear = batch + (config.i3_k + 1) * shape.ranking + submitted * (2 * screening + 2 * validation)
    typical = batch + 1.5 * screening + 0.3 * validation
    rounds_typical = int(shape.usable // typical)
    skill = task.info.initial_skill
    sample = train[0]
    prompt_chars = sum(len(r.system or "") + len(r.user_text())
                       for r in task.requests(skill, sample, config.target_model))
    max_turns = task.toolbox.max_turns if isinstance(task, AgentTask) else 1
    turns = min(EPISODE_TURNS, max_turns)
    # each later turn resends the conversation: its prompt grows by a call and a result
    per_exec = Usage(input_tokens=turns * prompt_chars // CHARS_PER_TOKEN
                     + (turns - 1) * turns * TURN_GROWTH_TOKENS // 2,
                     output_tokens=turns * task.info.max_tokens // 2)
    target_usage = _times(per_exec, shape.budget)
    per_round = Usage(input_tokens=OPTIMIZER_OVERHEAD_TOKENS + 4 * len(skill) // CHARS_PER_TOKEN,
                      output_tokens=OPTIMIZER_OUTPUT_TOKENS)
    optimizer_usage = _times(per_round, OPTIMIZER_CALLS_PER_ROUND * max(1, rounds_typical))
    prices = default_prices()
    return Plan(
        shape=shape, rounds_low=int(shape.usable // dear),
        rounds_high=int(shape.usable // cheap), rounds_typical=rounds_typical,
        target_usage=target_usage, optimizer_usage=optimizer_usage,
        target_cost=prices.cost(config.target_model, target_usage),
        optimizer_cost=prices.cost(config.optimizer_model, optimizer_usage),
        screen_quota=config.screen_solved + config.screen_random,
        validation_wanted=config.validation_size(len(train)) if config.validation else 0,
        local_optimizer=config.optimizer_model if _local(config.optimizer_model) else None,
        max_unusable_rounds=config.max_unusable_rounds, turns=turns, max_turns=max_turns,
    )


def _local(model: str) -> bool:
    """A model the price table runs for free: a GGUF file in process (an OpenAI-compatible
    server is priced by its model name, so it is not told apart from a hosted one)."""
    return default_prices().price(model) is FREE


def _times(usage: Usage, k: int) -> Usage:
    return Usage(input_tokens=usage.input_tokens * k, output_tokens=usage.output_tokens * k)


def _cost(usage: Usage, model: str) -> str:
    estimate = default_prices().estimate(model, usage)
    return estimate.describe() if estimate else f"no price for {model} in llm_cache/prices.json"


def render_plan(plan: Plan, config: Config) -> RenderableType:
    table = Table(title="plan (estimates; nothing has been spent)", show_header=False,
                  title_justify="left")
    table.add_column(style="bold")
    table.add_column()
    shape = plan.shape
    table.add_row("training samples", str(shape.n_train))
    table.add_row("budget", f"{shape.budget} target executions on training samples")
    if shape.exact_reserve:
        table.add_row("reserve", "exact: the executions final skill selection needs for the "
                                 "saved candidates (0 until one is saved)")
    else:
        table.add_row("reserve", f"{shape.reserve} for final skill selection")
    table.add_row("smallest budget", f"{shape.smallest_budget(1)} for 1 round, "
                                     f"{shape.smallest_budget(3)} for 3 rounds")
    table.add_row("per round", f"batch {shape.batch}, screening {shape.screening}/candidate, "
                               f"validation {shape.validation}, ranking subset {shape.ranking}")
    table.add_row("rounds", f"about {plan.rounds_typical} (from {plan.rounds_low} if every "
                            f"candidate reaches validation to {plan.rounds_high} if all fail "
                            "screening)")
    if plan.max_turns > 1:
        table.add_row("episodes", f"one execution = one agent episode: about {plan.turns} model "
                                  f"calls (a tool call and the answer), at most {plan.max_turns}"
                                  " (--max-turns); tool calls cost no tokens")
    table.add_row("target", f"{config.target_model}: {plan.target_usage.input_tokens:,} in / "
                            f"{plan.target_usage.output_tokens:,} out tokens, "
                            f"{_cost(plan.target_usage, config.target_model)}")
    table.add_row("optimizer", f"{config.optimizer_model}: {plan.optimizer_usage.input_tokens:,} "
                               f"in / {plan.optimizer_usage.output_tokens:,} out tokens, "
                               f"{_cost(plan.optimizer_usage, config.optimizer_model)}")
    target = default_prices().estimate(config.target_model, plan.target_usage)
    if target is not None and not target.local and plan.optimizer_cost is not None:
        table.add_row("run total", f"~${target.standard + plan.optimizer_cost:.2f} all live; "
                      f"~${target.batch + plan.optimizer_cost:.2f} with the target's waves of 8+ "
                      "calls on the Batch API (spec option ?batch=on; each then waits for its "
                      "batch, most end within an hour)")
    for model in dict.fromkeys((config.target_model, config.optimizer_model)):
        if (rates := default_prices().describe_rates(model)) is not None:
            table.add_row("prices", f"{model}: {rates}")
    parts: list[RenderableType] = [table]
    for warning in plan.warnings:
        parts.append(Text(f"warning: {warning}", style="bold yellow"))
    return Group(*parts)


def show_config(options: RunOptions) -> dict[str, Any]:
    """`plan --show-config`: the configuration `configure` assembles for the run, and where
    each value came from. A benchmark's preset is its class's, so no data is needed; other
    tasks are loaded for theirs."""
    spec = options.task.spec
    if spec in BENCHMARKS:
        preset = preset_layer(spec, BENCHMARKS[spec].presets(options.profile))
    else:
        info = load_task(options.task, data_dir=options.data_dir).info
        preset = task_layer(info, options.profile)
    return config_report(options.profile, spec, configure(options, preset, models=True))


def config_report(profile_name: str, task: str, layers: Layers) -> dict[str, Any]:
    """The effective configuration and where each value came from. The profile's own layer
    lists what it changes from the Config defaults (the paper's values), so the paper
    profile's is empty. `source` names, for every field, the layer that set it."""
    defaults = unstructure(Config())
    base = unstructure(profile(profile_name))
    changed = {k: v for k, v in base.items() if v != defaults[k]}
    return {
        "profile": profile_name,
        "task": task,
        "layers": [{"source": f"profile {profile_name}", "values": changed},
                   *({"source": layer.where, "values": dict(layer.values)}
                     for layer in layers.applied)],
        "config": unstructure(layers.layered.config),
        "source": dict(layers.layered.origins),
    }
