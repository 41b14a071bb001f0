"""The examples that end each subcommand's `--help`: two or three commands a user can adapt,
kept apart from the option definitions so that each parser stays about its options."""

from __future__ import annotations

import argparse

MODELS = "--target anthropic:claude-haiku-4-5 \\\n      --optimizer anthropic:claude-sonnet-4-6"

# Each example is one command; a long one is continued with a backslash, so that the help
# reads at 80 columns and still pastes into a shell.
EXAMPLES: dict[str, tuple[str, ...]] = {
    "train": (
        f"stratune train --task orders.jsonl --scorer exact --out runs/orders \\\n      {MODELS}",
        f"stratune train --task livemath --data data/ --test-eval --out runs/lm \\\n      {MODELS}",
        "# an Agent Skills folder in; the learned one in runs/orders-skill/skill/\n"
        f"  stratune train --task orders.jsonl --skill skills/order-answers \\\n"
        f"      --out runs/orders-skill {MODELS}",
    ),
    "plan": (
        f"stratune plan --task orders.jsonl --budget 6x \\\n      {MODELS}",
        "stratune plan --task mind2web --profile released --show-config",
    ),
    "evaluate": (
        "stratune evaluate --task orders.jsonl --target anthropic:claude-haiku-4-5 \\\n"
        "      --skill runs/orders/final_skill.txt --baseline initial",
        "stratune evaluate --task orders.jsonl --out evals/qwen \\\n"
        "      --skill runs/orders/skill/order-answers \\\n"
        "      --target openai:qwen2.5-7b@http://localhost:8000/v1",
    ),
    "replay": (
        "stratune replay traces/demo",
        "stratune replay evals/qwen        # an evaluation directory (evaluate --out)",
    ),
    "view": (
        "stratune view runs/orders",
        "stratune view runs/orders --round 3",
        "stratune view runs/orders --html orders.html     # one page, opens offline",
    ),
    "serve": (
        "stratune serve runs/orders                 # http://127.0.0.1:8049/, live",
        "stratune serve runs/example-grid --port 0  # a free port",
    ),
    "optimize-prompts": (
        "stratune optimize-prompts --prompt prompts:/qa/1 --predict app:predict \\\n"
        "      --data qa.jsonl --scorer app:exact --tracking-uri sqlite:///mlflow.db \\\n"
        "      --optimizer anthropic:claude-sonnet-4-6 --out runs/qa",
        "stratune optimize-prompts --prompt prompts:/qa/1 --prompt prompts:/style/2 \\\n"
        "      --predict app:predict --data qa.jsonl --scorer app:exact \\\n"
        "      --optimizer anthropic:claude-sonnet-4-6 --out runs/qa2 --budget 4x",
    ),
    "export-inspect": (
        "stratune export-inspect runs/capitals",
        "stratune export-inspect runs/capitals --output evals/capitals_learned.py",
    ),
    "demo": (
        "stratune demo",
        "stratune demo --live --out runs/demo-live",
    ),
    "cache": (
        "stratune cache stats --cache-dir runs/orders/cache",
        "stratune cache explain KEY --cache-dir runs/orders/cache",
        "stratune cache prune --corrupt --dry-run --cache-dir runs/orders/cache",
    ),
    "grid": (
        "stratune grid examples/grid/grid.toml --out runs/example-grid --dry-run",
        "stratune grid examples/grid/grid.toml --out runs/example-grid --jobs 8 \\\n"
        "      --max-cost 20",
    ),
    "compare": (
        "stratune compare runs/example-grid",
        "stratune compare traces/* --table runs --format markdown",
        "stratune compare runs/example-grid --by config.selector --format csv \\\n"
        "      --output tables.csv",
    ),
}


def epilog(command: str) -> str:
    return "examples:\n" + "\n".join(f"  {line}" for line in EXAMPLES[command])


def add_examples(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """End each subcommand's help with its examples (kept verbatim: one command a line)."""
    for name, parser in sub.choices.items():
        if name in EXAMPLES:
            parser.epilog = epilog(name)
            parser.formatter_class = argparse.RawDescriptionHelpFormatter
