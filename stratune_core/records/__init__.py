"""Leaf records: the frozen data the core reasons about (skills, samples, scores, ids, enums,
errors, skill parts, the baselines' specs and events) and the protocols of the task and the
model door. Imports no other sub-package (docs/design.md, Layers).
"""

__all__ = ["base", "enums", "errors", "form_spec", "ids", "llm", "method_events", "method_spec",
           "parts", "purposes", "task"]
