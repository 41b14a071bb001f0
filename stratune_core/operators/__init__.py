"""Revision operators' parts: the forms, patches, reply parsing, the refinement progress
p_t and I2's submission record. (The strategies that run them are in `round/`.)
"""

__all__ = ["forms", "parsing", "patches", "refinement", "submission"]
