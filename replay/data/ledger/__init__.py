"""The bundled ledger task: a messy payment record, rewritten as one canonical line
(`generate.py` writes its train.jsonl and test.jsonl; see README.md)."""

__all__ = ["generate"]
