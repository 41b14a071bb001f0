"""The cache key of a harness API call: the CLI's request body with what varies between two
identical episodes set to placeholders, so that a rerun, a resume and a replay find the calls of
the recorded episode. What is sent upstream is the body as the CLI wrote it; only the key is
normalized. Each rule is one entry of `RULES`, and docs/claude-code.md lists them:

- `metadata` (the device id and the session id, both random per fresh HOME);
- `stream` (the proxy answers a stream itself; upstream it asks for a whole message);
- every `cache_control` marker (where the prompt cache breaks, not what the model answers);
- the CLI's version in its billing header line (`cc_version=2.1.337.410`);
- the date line ("Today's date is 2026-12-07"), and any date in `currentDate` form;
- the kernel in the environment block (`OS Version: Linux 6.18...`);
- the episode's own directories (project, HOME, TMPDIR), when they are not the fixed paths of
  the sandbox.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

TOP_LEVEL_DROPPED = ("metadata", "stream")
DROPPED_ANYWHERE = ("cache_control",)
_VERSION = re.compile(r"cc_version=[0-9][\w.]*")
_DATE = re.compile(r"(Today's date is |currentDate[\"': ]*)(\d{4}-\d{2}-\d{2}|[A-Z][a-z]+ \d{1,2}, "
                   r"\d{4})")
_KERNEL = re.compile(r"(OS Version: )[^\n\"]*")

TextRule = Callable[[str], str]
RULES: tuple[tuple[str, TextRule], ...] = (
    ("cli version", lambda s: _VERSION.sub("cc_version=<version>", s)),
    ("date", lambda s: _DATE.sub(lambda m: f"{m.group(1)}<date>", s)),
    ("kernel", lambda s: _KERNEL.sub(lambda m: f"{m.group(1)}<os>", s)),
)


def _paths_rule(paths: Mapping[str, str]) -> TextRule:
    ordered = sorted(paths.items(), key=lambda kv: -len(kv[1]))  # the longest path first

    def rule(text: str) -> str:
        for name, path in ordered:
            if path:
                text = text.replace(path, f"<{name}>")
        return text
    return rule


def normalized(body: Any, paths: Mapping[str, str] = {}) -> Any:  # noqa: B006 (read only)
    """`body` with every rule applied (a new value; `body` is left as it is)."""
    rules: Sequence[TextRule] = (*(r for _, r in RULES), _paths_rule(paths))

    def walk(value: Any) -> Any:
        if isinstance(value, str):
            for rule in rules:
                value = rule(value)
            return value
        if isinstance(value, Mapping):
            return {k: walk(v) for k, v in value.items() if k not in DROPPED_ANYWHERE}
        if isinstance(value, list | tuple):
            return [walk(v) for v in value]
        return value

    if isinstance(body, Mapping):
        body = {k: v for k, v in body.items() if k not in TOP_LEVEL_DROPPED}
    return walk(body)
