"""Every product package says what it holds (issue 51): each directory of Python modules under
`stratune`, `stratune_core`, `llm_cache` and `replay` is a regular package, with an `__init__.py`
whose docstring describes it and whose literal `__all__` names its public surface, every name of
which exists: a submodule or sub-package, or a name the `__init__` itself binds.

Read from the source (AST), not by importing, so packages behind an optional dependency
(`replay/dspy_program` needs DSPy) are checked too. A directory without `__init__.py` would be a
namespace package, which `setuptools.packages.find` leaves out of the wheel.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PRODUCT = ("stratune", "stratune_core", "llm_cache", "replay")


def package_dirs() -> list[Path]:
    """Every directory under the product roots that holds a Python file."""
    dirs = {path.parent for top in PRODUCT for path in (ROOT / top).rglob("*.py")
            if "__pycache__" not in path.parts}
    return sorted(dirs)


def bound_names(tree: ast.Module) -> set[str]:
    """The names a module binds at its top level (assignments, imports, defs, classes)."""
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(t.id for t in targets if isinstance(t, ast.Name))
    return names


def declared_all(tree: ast.Module) -> list[str] | None:
    """The literal `__all__` list of a module, or None when it declares none."""
    for node in tree.body:
        targets = (node.targets if isinstance(node, ast.Assign)
                   else [node.target] if isinstance(node, ast.AnnAssign) else [])
        if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
            assert node.value is not None
            value = ast.literal_eval(node.value)
            assert isinstance(value, list) and all(isinstance(v, str) for v in value)
            return value
    return None


def submodules(package: Path) -> set[str]:
    modules = {path.stem for path in package.glob("*.py") if path.name != "__init__.py"}
    return modules | {path.name for path in package.iterdir()
                      if path.is_dir() and (path / "__init__.py").exists()}


def test_the_walk_finds_the_packages() -> None:
    found = {d.relative_to(ROOT).as_posix() for d in package_dirs()}
    assert {"replay", "replay/tools", "stratune_core/selection/selectors", "llm_cache/backends",
            "stratune"} <= found


@pytest.mark.parametrize("package", package_dirs(), ids=lambda d: d.relative_to(ROOT).as_posix())
def test_package_has_init_with_docstring_and_all(package: Path) -> None:
    init = package / "__init__.py"
    assert init.exists(), f"{package.relative_to(ROOT)}: no __init__.py (a namespace package)"
    tree = ast.parse(init.read_text(encoding="utf-8"))
    assert ast.get_docstring(tree), f"{init.relative_to(ROOT)}: no docstring"
    names = declared_all(tree)
    assert names is not None, f"{init.relative_to(ROOT)}: no __all__"
    assert len(names) == len(set(names)), f"{init.relative_to(ROOT)}: __all__ repeats a name"
    missing = set(names) - bound_names(tree) - submodules(package)
    assert not missing, f"{init.relative_to(ROOT)}: __all__ names what does not exist: {missing}"


def test_a_missing_name_is_caught(tmp_path: Path) -> None:
    """The check above can fail: a name that is neither bound nor a submodule is reported."""
    (tmp_path / "real.py").write_text("")
    tree = ast.parse('"""Doc."""\nfrom x import y\n__all__ = ["real", "y", "ghost"]\n')
    names = declared_all(tree)
    assert names is not None
    assert set(names) - bound_names(tree) - submodules(tmp_path) == {"ghost"}
