"""The `stratune` console script. The commands live in `replay.app`; `stratune cache ...` is
registered there from `llm_cache.cli`."""

from __future__ import annotations

from replay.app import build_parser, main

__all__ = ["build_parser", "main"]

if __name__ == "__main__":
    raise SystemExit(main())
