"""The packages depend one way: `stratune` -> `replay` -> `stratune_core` -> `llm_cache`.

`stratune` is the public module: it re-exports from the others and nothing in them imports it
(only users and tests do).

Read from the source (every `import`, also those inside functions), so a lazy import cannot hide
a dependency the module graph at run time would only show on the path that takes it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("llm_cache", "stratune_core", "replay", "stratune")
ALLOWED = {
    "llm_cache": set(),
    "stratune_core": {"llm_cache"},
    "replay": {"llm_cache", "stratune_core"},
    "stratune": {"llm_cache", "stratune_core", "replay"},
}


def _imported_packages(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        else:
            continue
        found.update(name.split(".")[0] for name in names)
    return found & set(PACKAGES)


def package_graph() -> dict[str, dict[str, list[str]]]:
    """package -> imported package -> the files of `package` that import it."""
    graph: dict[str, dict[str, list[str]]] = {p: {} for p in PACKAGES}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            for other in _imported_packages(path) - {package}:
                graph[package].setdefault(other, []).append(str(path.relative_to(ROOT)))
    return graph


def _cycle(graph: dict[str, dict[str, list[str]]]) -> list[str] | None:
    state: dict[str, int] = {}  # 1 on the stack, 2 done

    def visit(node: str, path: list[str]) -> list[str] | None:
        state[node] = 1
        for nxt in graph[node]:
            if state.get(nxt) == 1:
                return [*path, node, nxt]
            if nxt not in state and (found := visit(nxt, [*path, node])):
                return found
        state[node] = 2
        return None

    for start in graph:
        if start not in state and (found := visit(start, [])):
            return found
    return None


def test_no_package_cycle() -> None:
    assert _cycle(package_graph()) is None, _cycle(package_graph())


@pytest.mark.parametrize("package", PACKAGES)
def test_each_package_imports_only_the_layers_below(package: str) -> None:
    wrong = {other: files for other, files in package_graph()[package].items()
             if other not in ALLOWED[package]}
    assert not wrong, f"{package} must not import {sorted(wrong)}: {wrong}"


def test_the_checker_sees_lazy_imports(tmp_path: Path) -> None:
    """A function-level import counts: the check is not fooled by deferring an import."""
    module = tmp_path / "m.py"
    module.write_text("def f():\n    from replay.trace import RunDir\n    import llm_cache.key\n")
    assert _imported_packages(module) == {"replay", "llm_cache"}
