"""The bundled demo task (`replay/data/demo/`): a custom task scored with ANLS.

Short replies are all the task needs, so `max_tokens` is small to keep CPU-only runs quick.
"""

from __future__ import annotations

from importlib import resources

from replay.tasks import custom
from stratune_core.tasks.custom import CustomTask

MAX_TOKENS = 96


def load(*, placement: str = "system", limit: int | None = None) -> CustomTask:
    folder = resources.files("replay.data").joinpath("demo")
    with resources.as_file(folder) as path:
        return custom.load(path, scorer="anls", placement=placement, limit=limit, name="demo",
                           max_tokens=MAX_TOKENS)
