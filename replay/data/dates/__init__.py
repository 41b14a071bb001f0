"""The bundled dates task: one date per sentence, written as YYYY-MM-DD (`generate.py` writes
its train.jsonl and test.jsonl; see README.md)."""

__all__ = ["generate"]
