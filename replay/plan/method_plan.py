"""`stratune plan --method M` for a baseline: the budget B, the executions and optimizer calls
the method is expected to make, and their cost at the model prices (estimates; nothing is
spent)."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from llm_cache.records import Usage
from replay.plan.estimate import CHARS_PER_TOKEN, OPTIMIZER_OUTPUT_TOKENS, OPTIMIZER_OVERHEAD_TOKENS
from replay.plan.estimate import _cost as cost_text
from replay.run.method_options import check_budget
from stratune_core.config.knobs import Config
from stratune_core.config.serde import unstructure
from stratune_core.methods.entry import MethodEstimate
from stratune_core.records.errors import ConfigError
from stratune_core.records.method_spec import MethodSpec
from stratune_core.records.task import Task
from stratune_core.round.registry import entry_of


def method_usage(config: Config, task: Task,
                 guess: MethodEstimate) -> tuple[Usage, Usage]:
    """(target, optimizer) tokens of the estimate, per call as `stratune plan` prices them."""
    train = task.split("train")
    skill = task.info.initial_skill
    chars = sum(len(r.system or "") + len(r.user_text())
                for r in task.requests(skill, train[0], config.target_model))
    calls = guess.target_executions + guess.uncounted_target_calls
    target = Usage(input_tokens=calls * (chars // CHARS_PER_TOKEN),
                   output_tokens=calls * (task.info.max_tokens // 2))
    per_call_in = OPTIMIZER_OVERHEAD_TOKENS + 4 * len(skill) // CHARS_PER_TOKEN
    optimizer = Usage(input_tokens=guess.optimizer_calls * per_call_in,
                      output_tokens=guess.optimizer_calls * OPTIMIZER_OUTPUT_TOKENS)
    return target, optimizer


def render_method_plan(spec: MethodSpec, config: Config, task: Task) -> RenderableType:
    n = len(task.split("train"))
    budget = config.budget_for(n)
    estimate = entry_of(spec).estimate
    assert estimate is not None, "StraTune's plan is the run's shape (plan/estimate.py)"
    guess = estimate(spec, n, budget)
    target, optimizer = method_usage(config, task, guess)
    table = Table(title=f"plan for --method {spec.method} (estimates; nothing has been spent)",
                  show_header=False, title_justify="left")
    table.add_column(style="bold")
    table.add_column()
    table.add_row("settings", str(unstructure(spec)))
    table.add_row("training samples", str(n))
    table.add_row("budget", f"{budget} target executions on training samples (B, the same for "
                            "every method)")
    table.add_row("executions", f"about {guess.target_executions} counted"
                  + (f", {guess.uncounted_target_calls} summaries not counted"
                     if guess.uncounted_target_calls else ""))
    table.add_row("steps", str(guess.steps))
    table.add_row("optimizer calls", str(guess.optimizer_calls))
    table.add_row("target", f"{config.target_model}: {target.input_tokens:,} in / "
                            f"{target.output_tokens:,} out tokens, "
                            f"{cost_text(target, config.target_model)}")
    table.add_row("optimizer", f"{config.optimizer_model}: {optimizer.input_tokens:,} in / "
                               f"{optimizer.output_tokens:,} out tokens, "
                               f"{cost_text(optimizer, config.optimizer_model)}")
    try:  # as StraTune's plan does: a budget `train` refuses is said, with the least it takes
        check_budget(spec, budget, n)
    except ConfigError as exc:
        return Group(table, Text(f"warning: {str(exc).removeprefix('budget: ')}: `stratune "
                                 "train` refuses it", style="bold yellow"))
    return table
