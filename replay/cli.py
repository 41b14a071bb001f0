"""The `stratune` console script. The commands live in `replay.commands.app`; `stratune cache ...` is
registered there from `llm_cache.cli`."""

from __future__ import annotations

from replay.commands.app import build_parser, main

__all__ = ["build_parser", "main"]

if __name__ == "__main__":
    raise SystemExit(main())
