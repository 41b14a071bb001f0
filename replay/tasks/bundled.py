"""The bundled tasks (`replay/data/<name>/`): custom tasks shipped with the package.

`demo`: values from short business documents, scored with ANLS. `dates`: one date per
sentence, written as YYYY-MM-DD. `codes`: a product description's category code, from a closed
set of codes only the feedback reveals. `ledger`: a messy payment line rewritten as one
canonical line, a procedure of several normalizations. These three are scored by exact match.
`stock`: a shop's stock levels and prices, which only its inventory tools know (an agent task:
`TOOLS`), scored numerically. Short replies are all any of them needs, so `max_tokens` is
small to keep CPU-only runs quick.
"""

from __future__ import annotations

from importlib import resources

from replay.tasks import custom
from stratune_core.tasks.custom import CustomTask

MAX_TOKENS = 96
# name -> its scorer
BUNDLED = {"demo": "anls", "dates": "exact", "codes": "exact", "ledger": "exact",
           "stock": "numeric"}
# name -> the tools its executions run with (an agent task): `--tools` spelling
TOOLS = {"stock": "replay.data.stock.tools:TOOLS"}


def load(name: str = "demo", *, placement: str = "system", limit: int | None = None) -> CustomTask:
    folder = resources.files("replay.data").joinpath(name)
    with resources.as_file(folder) as path:
        return custom.load(path, scorer=BUNDLED[name], placement=placement, limit=limit,
                           name=name, max_tokens=MAX_TOKENS)


def bundled_tools(name: str) -> tuple[str, ...]:
    """The tools a bundled agent task declares (none for the others)."""
    return (TOOLS[name],) if name in TOOLS else ()
