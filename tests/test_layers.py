"""The sub-packages of `stratune_core` are layers (docs/design.md, Layers): each imports only
sub-packages of a lower layer, so the core reads bottom-up and a change to a low record
cannot reach back into what it is built from. Every import counts, also those inside
functions and under `if TYPE_CHECKING:` (the module graph of tests/test_import_graph.py).

The test doubles of the model layer (`llm_cache/testing/`) are for tests, benchmarks and
examples: nothing the product runs imports them.
"""

from __future__ import annotations

import pytest

from tests.test_import_graph import module_cycles, module_graph

# Bottom first; a sub-package may import those of lower layers only, never one beside it.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("records",),
    ("budget", "operators", "tasks"),
    ("feedback", "selection"),
    ("config",),
    ("evaluation",),
    ("released",),
    ("state",),
    ("prompts",),
    ("methods",),
    ("round",),
)
LEVEL = {name: level for level, names in enumerate(LAYERS) for name in names}


def _sub_package(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if parts[0] == "stratune_core" and len(parts) > 1 else None


def sub_package_graph() -> dict[str, dict[str, set[str]]]:
    """sub-package -> imported sub-package -> the importing module and what it imports."""
    graph: dict[str, dict[str, set[str]]] = {}
    for module, targets in module_graph(("stratune_core",)).items():
        if (source := _sub_package(module)) is None:
            continue
        edges = graph.setdefault(source, {})
        for target in targets:
            if (other := _sub_package(target)) not in (None, source):
                edges.setdefault(other, set()).add(f"{module} -> {target}")
    return graph


def test_every_sub_package_has_a_layer() -> None:
    assert set(sub_package_graph()) == set(LEVEL)


def not_downward(graph: dict[str, dict[str, set[str]]],
                 level: dict[str, int]) -> dict[str, list[str]]:
    """The edges of `graph` that point to the same layer or a higher one, with their imports."""
    return {f"{source} -> {other}": sorted(why)
            for source, edges in graph.items()
            for other, why in edges.items() if level[other] >= level[source]}


def test_each_sub_package_imports_only_lower_layers() -> None:
    wrong = not_downward(sub_package_graph(), LEVEL)
    assert not wrong, f"imports that are not downward: {wrong}"


def test_the_check_sees_an_import_upward_or_beside() -> None:
    """A type hint from a higher layer is caught as much as an import from a neighbour."""
    graph = {"records": {"state": {"stratune_core.records.a -> stratune_core.state.b"}},
             "feedback": {"selection": {"stratune_core.feedback.c -> stratune_core.selection"}},
             "round": {"records": {"stratune_core.round.d -> stratune_core.records.a"}}}
    assert set(not_downward(graph, LEVEL)) == {"records -> state", "feedback -> selection"}


def test_records_import_no_other_sub_package() -> None:
    assert not sub_package_graph()["records"]


def test_the_sub_package_graph_has_no_circle() -> None:
    graph = {source: set(edges) for source, edges in sub_package_graph().items()}
    assert module_cycles(graph) == []


@pytest.mark.parametrize("package", ("llm_cache", "stratune_core", "replay", "stratune"))
def test_the_product_never_imports_the_test_doubles(package: str) -> None:
    graph = module_graph(("llm_cache", "stratune_core", "replay", "stratune"))
    wrong = {module: sorted(t for t in targets if t.startswith("llm_cache.testing"))
             for module, targets in graph.items()
             if module.split(".")[0] == package and not module.startswith("llm_cache.testing")}
    assert not {m: t for m, t in wrong.items() if t}
