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
    module.write_text("def f():\n    from replay.rundir.trace import RunDir\n    import llm_cache.key\n")
    assert _imported_packages(module) == {"replay", "llm_cache"}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules(package: str) -> dict[str, Path]:
    return {_module_name(path): path for path in sorted((ROOT / package).rglob("*.py"))}


def _imported_modules(name: str, path: Path, known: set[str]) -> set[str]:
    """The modules of `known` that `name` imports, and the packages whose `__init__` that runs.

    `from p import m` imports module `p.m` when there is one, else `p` itself. A package that
    holds the importer is already being imported when the importer runs, so it is no edge.
    A function-level import counts, and so does one under `if TYPE_CHECKING:`: it never runs,
    but a circle of type hints is still two modules that cannot be understood, moved or split
    apart (a hint that would close one names a narrower type from below instead)."""
    is_package = path.name == "__init__.py"
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    targets: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = name.split(".")[: len(name.split(".")) - node.level + is_package]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                targets.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base)
    own = {".".join(name.split(".")[:i]) for i in range(1, name.count(".") + 1 + is_package)}
    found: set[str] = set()
    for target in targets:
        parts = target.split(".")
        for i in range(1, len(parts) + 1):
            prefix = ".".join(parts[:i])
            if prefix in known and prefix not in own and prefix != name:
                found.add(prefix)
    return found


def module_graph(packages: tuple[str, ...]) -> dict[str, set[str]]:
    """module -> the modules it imports, over the modules of `packages`."""
    paths = {name: path for package in packages for name, path in _modules(package).items()}
    known = set(paths)
    return {name: _imported_modules(name, path, known) for name, path in paths.items()}


def module_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component: list[str] = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


@pytest.mark.parametrize("package", ("llm_cache", "stratune_core", "replay"))
def test_no_module_cycle(package: str) -> None:
    """No circle of imports between modules, also inside a sub-package, lazy imports and those
    for type hints alone (`if TYPE_CHECKING:`) included."""
    cycles = module_cycles(module_graph((package,)))
    assert not cycles, f"{len(cycles)} import cycles in {package}: {cycles}"


def test_the_cycle_check_sees_a_circle_through_a_package_init(tmp_path: Path) -> None:
    graph = {"p": {"p.a"}, "p.a": {"p.b"}, "p.b": {"p.a"}, "q": {"p.a"}}
    assert module_cycles(graph) == [["p.a", "p.b"]]


def test_type_checking_imports_are_edges(tmp_path: Path) -> None:
    """An import for type hints alone still joins two modules: a circle of them fails."""
    (tmp_path / "m.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import p.a\n"
        "def f():\n    import p.b\n")
    found = _imported_modules("m", tmp_path / "m.py", {"p.a", "p.b"})
    assert found == {"p.a", "p.b"}


def test_relative_and_from_imports_resolve_to_modules() -> None:
    path = ROOT / "stratune_core" / "round" / "run.py"
    known = set(_modules("stratune_core"))
    assert "stratune_core.round.step" in _imported_modules("stratune_core.round.run", path, known)
