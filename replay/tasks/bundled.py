"""The bundled tasks (`replay/data/<name>/`): custom tasks shipped with the package.

`demo`: values from short business documents, scored with ANLS. `dates`: one date per
sentence, written as YYYY-MM-DD. `codes`: a product description's category code, from a closed
set of codes only the feedback reveals. `ledger`: a messy payment line rewritten as one
canonical line, a procedure of several normalizations. The last three are scored by exact
match. Short replies are all any of them needs, so `max_tokens` is small to keep CPU-only runs
quick.
"""

from __future__ import annotations

from importlib import resources

from replay.tasks import custom
from stratune_core.tasks.custom import CustomTask

MAX_TOKENS = 96
# name -> its scorer
BUNDLED = {"demo": "anls", "dates": "exact", "codes": "exact", "ledger": "exact"}


def load(name: str = "demo", *, placement: str = "system", limit: int | None = None) -> CustomTask:
    folder = resources.files("replay.data").joinpath(name)
    with resources.as_file(folder) as path:
        return custom.load(path, scorer=BUNDLED[name], placement=placement, limit=limit,
                           name=name, max_tokens=MAX_TOKENS)
