"""Table 8 (training tokens) and tokens and cost by call kind, from each run's usage.json.

Tokens count input (with prompt-cache reads and writes) and output of every training call of
every kind the run made (the baselines' reflections, skill updates and summaries as well as
StraTune's four kinds), including those a resumed run answered from its own cache; Table 8
leaves out test evaluation, the cost table shows it as its own kind. Values are means per run
over the n runs of a group; ratios are taken between those means. Table 8 lists the full method
when a pair has it (as the paper does), else every method; the cost table lists every method.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from llm_cache.records import CallKind
from replay.compare.group import by_pair_label_dataset, datasets, ordered
from replay.compare.model import Column, Row, Table
from replay.compare.runs import METHOD, Run
from stratune_core.round.registry import METHODS

# The target's calls: its executions and what a method has the target write besides them (the
# entries' `target_writes`: the budget does not count those, but they are paid). Every other
# training kind is the optimizer's, so a kind added to CallKind later is counted, not dropped.
TARGET_KINDS = (CallKind.TARGET_EXECUTION.value, CallKind.SUMMARY.value)
# the target's calls as the notes name them: "executions and <each entry's target_writes>"
TARGET_CALLS = " and ".join(("executions", *(e.target_writes for e in METHODS.values()
                                              if e.target_writes)))
TEST_KIND = CallKind.TEST_EVALUATION.value  # `--test-eval`, after training and outside B
SELECTION = CallKind.STRATEGY_SELECTION.value
KEYS = ("calls", "input", "output", "cache_read", "cache_write", "cost")
TRAINING_TOTAL = "training total"  # every kind but test evaluation
TOTAL = "total with test"


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


def kinds_of(runs: Sequence[Run]) -> list[str]:
    """Every kind the runs' usage holds: CallKind's order, then any kind this version does not
    know (a run recorded by a newer one), so that no paid call is left out of a table; test
    evaluation last, after the training it does not belong to."""
    found = {kind for run in runs for kind in by_kind(run)}
    known = [kind.value for kind in CallKind if kind.value in found and kind.value != TEST_KIND]
    return known + sorted(found - {*known, TEST_KIND}) + ([TEST_KIND] if TEST_KIND in found else [])


def optimizer_kinds(kinds: Sequence[str]) -> list[str]:
    return [k for k in kinds if k not in TARGET_KINDS and k != TEST_KIND]


def _groups(runs: Sequence[Run], by: Sequence[str], *, every_method: bool = False
            ) -> list[tuple[str, str, str, list[Run]]]:
    out = []
    for pair, labels in sorted(by_pair_label_dataset(runs, by).items()):
        paper = METHOD in labels and not by and not every_method
        chosen = [METHOD] if paper else ordered(labels)
        for name in datasets(runs):
            for label in chosen:
                with_usage = [r for r in labels.get(label, {}).get(name, []) if r.usage]
                if with_usage:
                    out.append((pair, name, label, with_usage))
    return out


def training_tokens(runs: Sequence[Run], by: Sequence[str] = ()) -> Table | None:
    rows = []
    for pair, name, label, group in _groups(runs, by):
        target = _mean(group, TARGET_KINDS, "tokens")
        optimizer = _mean(group, optimizer_kinds(kinds_of(group)), "tokens")
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
                 rows=rows, notes=[f"Target: {TARGET_CALLS}; Optimizer: "
                                   "every other training call (selection, generation, feedback "
                                   "preparation, the baselines' reflections and skill updates); "
                                   "Ratio: optimizer tokens as a percentage of target tokens; "
                                   "mean per run over n runs"])


def _kind_rows(group: Sequence[Run], value: Any, title: str) -> list[Row]:
    """One row per kind, then the training total and, when the runs were scored on the test
    split, the total with it: `value(kinds, key)` gives a figure over the group."""
    kinds = kinds_of(group)
    training = [k for k in kinds if k != TEST_KIND]
    rows = [Row([kind, *(value([kind], key) for key in KEYS)], group=title) for kind in kinds]
    rows.append(Row([TRAINING_TOTAL, *(value(training, key) for key in KEYS)], group=title))
    if TEST_KIND in kinds:
        rows.append(Row([TOTAL, *(value(kinds, key) for key in KEYS)], group=title))
    return rows


def cost_by_kind(runs: Sequence[Run], by: Sequence[str] = ()) -> Table | None:
    rows = []
    for pair, name, label, group in _groups(runs, by, every_method=True):
        rows += _kind_rows(group, lambda kinds, key, g=group: _mean(g, kinds, key),
                           f"{pair} — {name} — {label} (mean of {len(group)} runs)")
    with_usage = [r for r in runs if r.usage]
    if with_usage:
        rows += _kind_rows(with_usage, lambda kinds, key: sum(
            by_kind(r).get(k, {}).get(key, 0.0) for r in with_usage for k in kinds),
            f"all {len(with_usage)} runs (sum)")
    if not rows:
        return None
    columns = [Column("Call kind"), Column("Calls", "number", 1),
               Column("Input tokens", "number", 0), Column("Output tokens", "number", 0),
               Column("Cache read", "number", 0), Column("Cache write", "number", 0),
               Column("Cost ($)", "number", 4)]
    return Table(id="cost_by_kind", title="Tokens and cost by call kind", columns=columns,
                 rows=rows, notes=["every kind of call the runs made, the baselines' reflection, "
                                   "skill_update and summary included; test_evaluation: "
                                   "--test-eval's scoring, after training and outside the "
                                   "budget; cost from the price table (llm_cache/prices.json), "
                                   "models without a price count 0"])
