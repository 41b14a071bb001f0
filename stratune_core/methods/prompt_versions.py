"""Which prompt version a run's method builds, as its manifest records it.

StraTune's optimizer prompts (`prompts/templates.PROMPT_VERSION`) and the baselines' own prompts
(`methods/*_prompts.py`) change apart: a new wording of the selection prompt does not make a
recorded GEPA or Iter-CoT run unreplayable. A hybrid runs StraTune's rounds, so it takes
StraTune's version.
"""

from __future__ import annotations

from stratune_core.prompts.templates import PROMPT_VERSION
from stratune_core.records.method_spec import MethodSpec, StraTuneMethod

# The baselines' prompts; "3" is the version they were first recorded with. Change it whenever
# one of their prompts' bytes change for the same state.
BASELINE_PROMPT_VERSION = "3"


def prompt_version_of(method: MethodSpec) -> str:
    return PROMPT_VERSION if isinstance(method, StraTuneMethod) else BASELINE_PROMPT_VERSION
