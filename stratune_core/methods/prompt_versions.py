"""Which prompt version a run's method builds, as its manifest records it.

StraTune's optimizer prompts (`prompts/templates.PROMPT_VERSION`) and each baseline's own
prompts (`methods/*_prompts.py`) change apart: a new wording of the selection prompt does not
make a recorded GEPA or Iter-CoT run unreplayable, and a new TextGrad procedure does not make a
recorded GEPA run stale. A hybrid runs StraTune's rounds, so it takes StraTune's version.
"""

from __future__ import annotations

from stratune_core.prompts.templates import PROMPT_VERSION
from stratune_core.records.method_spec import (
    GepaMethod,
    IterCotMethod,
    MethodSpec,
    SkillOptMethod,
    StraTuneMethod,
    TextGradMethod,
    Trace2SkillMethod,
)

# Each baseline's prompts; "3" is the version they were first recorded with. Change a
# baseline's entry whenever one of its prompts' bytes change for the same state.
# "4": TextGrad's two gradient calls per sample and unconstrained update, Iter-CoT's
# two-wording revise turn, SkillOpt's separate failure and success merges, protected epoch
# guidance and unconditional slow update (issue 37).
BASELINE_PROMPT_VERSIONS: dict[type, str] = {
    TextGradMethod: "4",
    GepaMethod: "3",
    IterCotMethod: "4",
    Trace2SkillMethod: "3",
    SkillOptMethod: "4",
}


def prompt_version_of(method: MethodSpec) -> str:
    if isinstance(method, StraTuneMethod):
        return PROMPT_VERSION
    return BASELINE_PROMPT_VERSIONS[type(method)]
