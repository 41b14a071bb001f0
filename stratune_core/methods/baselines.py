"""The baselines' entries, in the paper's order (Table 2's rows, which compare's tables keep):
the one place that lists them. The registry (`round/registry.METHODS`) adds StraTune's entry in
front; a hybrid's round (`round/hybrid.py`) finds its generator's entry here, since the round
sits below the registry."""

from __future__ import annotations

from stratune_core.methods import gepa_run, iter_cot, skillopt, textgrad, trace2skill
from stratune_core.methods.entry import MethodEntry
from stratune_core.records.method_spec import Generator

BASELINES: tuple[MethodEntry, ...] = (
    gepa_run.ENTRY, textgrad.ENTRY, skillopt.ENTRY, trace2skill.ENTRY, iter_cot.ENTRY,
)


def generator_entry(generator: Generator) -> MethodEntry:
    """The entry of the method whose candidate generation a hybrid runs (Table 4)."""
    return next(e for e in BASELINES if e.method.value == generator.value)
