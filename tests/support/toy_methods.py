"""The toy optimizer's answers to the baselines' prompts (test doubles only).

`MethodOptimizer` answers a baseline's optimizer call by its system prompt and hands every
other call (StraTune's) to the wrapped `ToyOptimizer`, so StraTune runs are unchanged. Like
the toy optimizer it learns the rules for the markers named in the failures it is shown; a
hash of the prompt makes some replies unusable and some updates harmful (an unconditional rule
that validation must catch), so every branch of a method is taken.
"""

from __future__ import annotations

import re

from attrs import field, frozen

from llm_cache.records import Request, Response, Usage
from stratune_core.methods import textgrad_prompts
from tests.support.toy import BAD_RULES, RULES, ToyOptimizer, _h, _skill_of


def _markers(prompt: str) -> list[str]:
    """The markers of the failures shown, in the order of RULES."""
    return [m for m in RULES if f"marker [{m}]" in prompt]


def _with_rules(skill: str, rules: list[str]) -> str:
    missing = [r for r in rules if r not in skill]
    return skill + "".join(f"\n{r}" for r in missing)


@frozen
class MethodOptimizer:
    stratune: ToyOptimizer = field(factory=ToyOptimizer)
    mixed: bool = True  # some unusable replies and harmful updates

    def __call__(self, request: Request) -> Response:
        prompt = request.messages[0].text()
        system = request.system
        if system == textgrad_prompts.GRADIENT_SYSTEM:
            text = self._gradient(prompt)
        elif system == textgrad_prompts.UPDATE_SYSTEM:
            text = self._update(prompt)
        else:
            return self.stratune(request)
        return Response(text=text, usage=Usage(input_tokens=len(prompt) // 4,
                                               output_tokens=len(text) // 4))

    def _gradient(self, prompt: str) -> str:
        found = _markers(prompt.split("</skill>", 1)[-1])
        if not found:
            return "The skill handled this execution; keep it."
        return " ".join(f"The skill lacks the rule: {RULES[m]}" for m in found)

    def _update(self, prompt: str) -> str:
        h = _h(prompt)
        if self.mixed and h % 6 == 0:
            return "I would add a rule about the markers."  # no skill block: unusable
        skill = _skill_of(prompt)
        wanted = [r for r in RULES.values() if r in prompt.split("</skill>", 1)[-1]]
        if self.mixed and h % 6 == 1 and wanted:
            marker = next(m for m, r in RULES.items() if r == wanted[0])
            wanted = [BAD_RULES[marker]]  # an over-general rule: validation should revert it
        tag = textgrad_prompts.SKILL_TAG
        return f"Here is the improved skill.\n<{tag}>\n{_with_rules(skill, wanted)}\n</{tag}>"


def method_optimizer_text(prompt: str) -> str:
    """The markers a prompt names, for assertions."""
    return ",".join(re.findall(r"marker \[(\w)\]", prompt))


def run_method(spec, config, task, optimizer: MethodOptimizer | None = None):
    """A method's whole run against the in-process toy models: (events, last state, llm)."""
    from stratune_core.methods.registry import iterate_method
    from tests.support.toy import InProcessLLM

    llm = InProcessLLM(optimizer=optimizer or MethodOptimizer())
    events, state = [], None
    for state, evs in iterate_method(spec, config, task, llm):  # noqa: B007
        events.extend(evs)
    return events, state, llm


def unattributed(events, budget: int) -> str | None:
    """None when every unit of budget is attributed: the `TargetExecuted` events' sample ids
    add up to the spent figure of the run, charges only grow, and nothing passes B."""
    from stratune_core import events as ev

    charged = [e for e in events if isinstance(e, ev.TargetExecuted)]
    finished = events[-1]
    if not isinstance(finished, ev.RunFinished):
        return f"the run ends with {type(finished).__name__}"
    total = sum(len(e.sample_ids) for e in charged)
    if total != finished.spent:
        return f"{total} executions attributed, {finished.spent} spent"
    running = 0
    for e in charged:
        running += len(e.sample_ids)
        if e.spent != running or not e.sample_ids:
            return f"charge {e} does not add up (running total {running})"
    if finished.spent > budget or finished.budget != budget:
        return f"spent {finished.spent} of {finished.budget}, B = {budget}"
    return None
