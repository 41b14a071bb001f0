"""Data files shipped with StraTune: the bundled tasks (demo, dates, codes, ledger, stock), each
with the generator of its JSONL files, and the fallback initial skills."""

__all__ = ["codes", "dates", "demo", "initial_skills", "ledger", "stock"]
