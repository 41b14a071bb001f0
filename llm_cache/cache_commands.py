"""The bodies of `stratune cache stats | explain KEY | prune` (`llm_cache.cli` holds their flags
and dispatches here, so that building the parser opens no store).

`stats` and `explain` open the cache read-only (they work on a read-only disk and beside a run
that is writing the cache); `prune` writes. A directory that holds no cache is an error, never
silently created.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import TextIO

from llm_cache.errors import CacheCorruptError
from llm_cache.key import explain_document
from llm_cache.prices import default_prices
from llm_cache.reader import CacheReader
from llm_cache.records import Usage
from llm_cache.store import DB_FILE, CacheNotFound, CacheStore, StoredEntry

_KEY = re.compile(r"^[0-9a-f]{32}$")


def stats(args: argparse.Namespace, out: TextIO) -> int:
    store = CacheReader(args.cache_dir)
    try:
        counts: dict[str, int] = defaultdict(int)
        usage: dict[str, Usage] = defaultdict(Usage)
        corrupt = 0
        for _, entry in store.entries():
            if isinstance(entry, CacheCorruptError):
                corrupt += 1
                continue
            model = entry.document().get("model", "?")
            counts[model] += 1
            usage[model] = usage[model] + entry.response.usage
        prices = default_prices()
        print(f"cache {store.directory}: {len(store)} entries, {store.volume()} bytes, "
              f"{corrupt} corrupt", file=out)
        print(f"{'model':<44} {'entries':>8} {'in':>10} {'out':>10} {'c.write':>9} "
              f"{'c.read':>9} {'recorded $':>11}", file=out)
        for model in sorted(counts):
            u = usage[model]
            cost = prices.cost(model, u)
            shown = "unpriced" if cost is None else f"{cost:.4f}"
            print(f"{model:<44} {counts[model]:>8} {u.input_tokens:>10} {u.output_tokens:>10} "
                  f"{u.cache_write_tokens:>9} {u.cache_read_tokens:>9} {shown:>11}", file=out)
        return 0
    finally:
        store.close()


def explain(args: argparse.Namespace, out: TextIO) -> int:
    key = args.key.strip().lower()
    if not _KEY.match(key):
        print(f"error: {args.key!r} is not a cache key (32 hex characters)", file=sys.stderr)
        return 2
    store = CacheReader(args.cache_dir)
    try:
        try:
            entry = store.get(key)
        except CacheCorruptError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
        if entry is None:
            print(f"error: key {key} is not in {store.directory}", file=sys.stderr)
            return 1
        print(explain_document(entry.document()), file=out)
        _print_entry(entry, out)
        return 0
    finally:
        store.close()


def _print_entry(entry: StoredEntry, out: TextIO) -> None:
    r = entry.response
    recorded = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(entry.created_at))
    print(f"stored     by {entry.backend or '?'} at {recorded} UTC, "
          f"{entry.latency_s:.2f} s, {entry.retries} retries", file=out)
    print(f"response   model={r.model} stop_reason={r.stop_reason} usage(in={r.usage.input_tokens}"
          f", out={r.usage.output_tokens}, c.write={r.usage.cache_write_tokens}, "
          f"c.read={r.usage.cache_read_tokens})", file=out)
    if r.clamped_max_tokens is not None:
        asked = entry.document().get("max_tokens", "?")
        print(f"max_tokens {r.clamped_max_tokens} sent (asked {asked}): lowered to fit the "
              "model's context beside the prompt", file=out)
    preview = r.text if len(r.text) <= 400 else r.text[:400] + "…"
    print(f"text       {preview}", file=out)


def prune(args: argparse.Namespace, out: TextIO) -> int:
    if not (args.corrupt or args.model or args.older_than_days is not None):
        print("error: choose what to prune: --corrupt, --model MODEL or --older-than-days N",
              file=sys.stderr)
        return 2
    cutoff = None if args.older_than_days is None else time.time() - args.older_than_days * 86400
    if not (Path(args.cache_dir) / DB_FILE).is_file():
        raise CacheNotFound(f"{args.cache_dir}: holds no cache ({DB_FILE} missing); "
                            "check --cache-dir")
    store = CacheStore(args.cache_dir)  # a damaged database is refused here, in one line
    try:
        doomed = []
        for key, entry in store.entries():
            if isinstance(entry, CacheCorruptError):
                if args.corrupt:
                    doomed.append(key)
                continue
            if _selected(entry, args.model, cutoff):
                doomed.append(key)
        if not args.dry_run:
            for key in doomed:
                store.delete(key)
        verb = "would delete" if args.dry_run else "deleted"
        print(f"{verb} {len(doomed)} of {len(store) + (0 if args.dry_run else len(doomed))} "
              f"entries in {store.directory}", file=out)
        return 0
    finally:
        store.close()


def _selected(entry: StoredEntry, model: str | None, cutoff: float | None) -> bool:
    """Filters narrow each other; with neither given (only --corrupt) nothing valid is chosen."""
    if model is None and cutoff is None:
        return False
    if model is not None and entry.document().get("model") != model:
        return False
    return cutoff is None or entry.created_at < cutoff
