"""Data files shipped with StraTune: the demo task and fallback initial skills."""
