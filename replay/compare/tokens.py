"""Table 8 (training tokens) and tokens and cost by call kind, from each run's usage.json.

Tokens count input (with prompt-cache reads and writes) and output of every training call,
including those a resumed run answered from its own cache; test evaluation is not included.
Values are means per run over the n runs of a group; ratios are taken between those means.
Table 8 lists the full method when a pair has it (as the paper does), else every method.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from replay.compare.group import by_pair_label_dataset, datasets, ordered
from replay.compare.model import Column, Row, Table
from replay.compare.runs import METHOD, Run

TARGET_KINDS = ("target_execution",)
SELECTION = "strategy_selection"
KINDS = ("target_execution", "strategy_selection", "candidate_generation", "feedback_preparation")


def _tokens(usage: dict[str, Any]) -> int:
    return sum(usage[k] for k in ("input_tokens", "output_tokens", "cache_read_tokens",
                                  "cache_write_tokens"))


def by_kind(run: Run) -> dict[str, dict[str, float]]:
    """Per call kind: calls, input/output/cache tokens, tokens and cost (all sittings)."""
    out: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for row in (run.usage or {}).get("rows", []):
        kind = out[row["kind"]]
        kind["calls"] += row["calls"]
        for usage in (row["usage"], row["cached_usage"]):
            kind["input"] += usage["input_tokens"]
            kind["output"] += usage["output_tokens"]
            kind["cache_read"] += usage["cache_read_tokens"]
            kind["cache_write"] += usage["cache_write_tokens"]
            kind["tokens"] += _tokens(usage)
        kind["cost"] += row["cost_usd"] + row["would_have_cost_usd"]
    return out


def _mean(runs: Sequence[Run], kinds: Sequence[str], key: str) -> float:
    return sum(by_kind(r).get(k, {}).get(key, 0.0) for r in runs for k in kinds) / len(runs)


def _pct(part: float, whole: float) -> float | None:
    return None if whole == 0 else 100.0 * part / whole


def _groups(runs: Sequence[Run], by: Sequence[str]) -> list[tuple[str, str, str, list[Run]]]:
    out = []
    for pair, labels in sorted(by_pair_label_dataset(runs, by).items()):
        chosen = [METHOD] if METHOD in labels and not by else ordered(labels)
        for name in datasets(runs):
            for label in chosen:
                with_usage = [r for r in labels.get(label, {}).get(name, []) if r.usage]
                if with_usage:
                    out.append((pair, name, label, with_usage))
    return out


def training_tokens(runs: Sequence[Run], by: Sequence[str] = ()) -> Table | None:
    rows = []
    optimizer_kinds = [k for k in KINDS if k not in TARGET_KINDS]
    for pair, name, label, group in _groups(runs, by):
        target = _mean(group, TARGET_KINDS, "tokens")
        optimizer = _mean(group, optimizer_kinds, "tokens")
        selection = _mean(group, [SELECTION], "tokens")
        calls = _mean(group, [SELECTION], "calls")
        rows.append(Row([name, label, target / 1e6, optimizer / 1e6, _pct(optimizer, target),
                         calls, selection / 1e3, _pct(selection, optimizer),
                         _pct(selection, target), len(group)], group=pair))
    if not rows:
        return None
    columns = [Column("Dataset"), Column("Method"), Column("Target (M)", "number", 3),
               Column("Optimizer (M)", "number", 3), Column("Ratio (%)", "percent", 1),
               Column("Selection calls", "number", 1), Column("Selection tokens (k)", "number", 1),
               Column("Of optimizer (%)", "percent", 1), Column("Of target (%)", "percent", 2),
               Column("n", "int")]
    return Table(id="tokens", title="Training tokens per run (Table 8)", columns=columns,
                 rows=rows, notes=["Ratio: optimizer tokens as a percentage of target tokens; "
                                   "mean per run over n runs"])


def cost_by_kind(runs: Sequence[Run], by: Sequence[str] = ()) -> Table | None:
    rows = []
    for pair, name, label, group in _groups(runs, by):
        for kind in KINDS:
            if any(kind in by_kind(r) for r in group):
                rows.append(Row([kind, *(_mean(group, [kind], key) for key in
                                         ("calls", "input", "output", "cache_read", "cache_write",
                                          "cost"))], group=f"{pair} — {name} — {label} "
                                                           f"(mean of {len(group)} runs)"))
    with_usage = [r for r in runs if r.usage]
    for kind in KINDS:
        if any(kind in by_kind(r) for r in with_usage):
            rows.append(Row([kind, *(sum(by_kind(r).get(kind, {}).get(key, 0.0)
                                         for r in with_usage)
                                     for key in ("calls", "input", "output", "cache_read",
                                                 "cache_write", "cost"))],
                            group=f"all {len(with_usage)} runs (sum)"))
    if not rows:
        return None
    columns = [Column("Call kind"), Column("Calls", "number", 1),
               Column("Input tokens", "number", 0), Column("Output tokens", "number", 0),
               Column("Cache read", "number", 0), Column("Cache write", "number", 0),
               Column("Cost ($)", "number", 4)]
    return Table(id="cost_by_kind", title="Tokens and cost by call kind", columns=columns,
                 rows=rows, notes=["Cost from the price table (llm_cache/prices.json); "
                                   "models without a price count 0"])
