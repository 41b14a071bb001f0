"""The bundled stock task: questions about a shop's stock that only its tools (`tools.py`) can
answer (`generate.py` writes its train.jsonl and test.jsonl; see README.md)."""

__all__ = ["generate", "tools"]
