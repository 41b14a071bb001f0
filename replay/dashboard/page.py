"""The page itself: one HTML document that carries its scripts, its style and its data, and
loads nothing (a Content-Security-Policy forbids every fetch but the live page's own `/data`).

The data travels as JSON in a `<script type="application/json">` block, with `<`, `>` and `&`
written as JSON escapes so that no text from the trace can close the block; the scripts put
every text into the DOM as text. Charts: plotly.js, embedded whole from the `plotly` package
(docs/dashboard.md says why)."""

from __future__ import annotations

import functools
import html
import json
from importlib import resources
from typing import Any

ASSETS = ("common.js", "run.js", "run_parts.js", "grid.js", "live.js")
# Plotly draws into inline styles and data: images; nothing may be fetched or framed.
POLICY = ("default-src 'none'; script-src 'unsafe-inline'; "
          "style-src 'unsafe-inline'; img-src data: blob:; font-src data:; "
          "connect-src {connect}; base-uri 'none'; form-action 'none'")
_JSON_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028",
                 "\u2029": "\\u2029"}


def _asset(name: str) -> str:
    return resources.files("replay.dashboard").joinpath("assets", name).read_text("utf-8")


@functools.cache
def plotly_js() -> str:
    """plotly.js as the `plotly` package ships it (the `dashboard` extra)."""
    try:
        from plotly.offline import get_plotlyjs
    except ImportError:
        from stratune_core.records.errors import StraTuneError

        raise StraTuneError("the dashboard draws its charts with plotly, which is not "
                            "installed: pip install 'stratune[dashboard]'") from None
    return get_plotlyjs()


def script_json(data: Any) -> str:
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    for raw, escaped in _JSON_ESCAPES.items():
        text = text.replace(raw, escaped)
    return text


def document(kind: str, title: str, sections: dict[str, Any],
             live: dict[str, Any] | None = None) -> str:
    """The whole page. `live` (endpoint, generation, interval) makes it ask for updates."""
    data = {"kind": kind, "title": title, "sections": sections, "live": live}
    policy = POLICY.format(connect="'self'" if live else "'none'")
    scripts = "\n".join(_asset(name) for name in ASSETS)
    return (
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        f"<meta http-equiv=\"Content-Security-Policy\" content=\"{policy}\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        "<meta name=\"generator\" content=\"stratune\">\n"
        f"<title>{html.escape(title)} · StraTune</title>\n"
        f"<style>\n{_asset('page.css')}</style>\n</head>\n<body>\n<main id=\"app\"></main>\n"
        f"<script type=\"application/json\" id=\"stratune-data\">{script_json(data)}</script>\n"
        f"<script>\n{plotly_js()}\n</script>\n<script>\n{scripts}\n</script>\n"
        "</body>\n</html>\n"
    )
