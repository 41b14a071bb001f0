"""The bundled tasks' generator scripts (`replay/data/<name>/generate.py`), loaded as modules
so tests can compare their output with the committed files."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

DATA = Path(__file__).resolve().parents[2] / "replay" / "data"


def generator(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"{name}_generate", DATA / name / "generate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
