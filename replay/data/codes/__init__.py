"""The bundled codes task: a product's category code from a closed set only the feedback
reveals (`generate.py` writes its train.jsonl and test.jsonl; see README.md)."""

__all__ = ["generate"]
