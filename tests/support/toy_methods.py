"""The toy optimizer's answers to the baselines' prompts (test doubles only).

`MethodOptimizer` answers a baseline's optimizer call by its system prompt and hands every
other call (StraTune's) to the wrapped `ToyOptimizer`, so StraTune runs are unchanged. Like
the toy optimizer it learns the rules for the markers named in the failures it is shown; a
hash of the prompt makes some replies unusable and some updates harmful (an unconditional rule
that validation must catch), so every branch of a method is taken.
"""

from __future__ import annotations

import re

import attrs
from attrs import field, frozen

from llm_cache.records import Request, Response, Usage
from stratune_core.methods import (
    gepa_prompts,
    skillopt_prompts,
    textgrad_prompts,
    trace2skill_prompts,
)
from stratune_core.methods.replies import all_blocks
from tests.support.toy import BAD_RULES, RULES, ToyOptimizer, _h, _skill_of


def _markers(prompt: str) -> list[str]:
    """The markers of the failures shown, in the order of RULES."""
    return [m for m in RULES if f"marker [{m}]" in prompt]


def _with_rules(skill: str, rules: list[str]) -> str:
    missing = [r for r in dict.fromkeys(rules) if r not in skill]
    return skill + "".join(f"\n{r}" for r in missing)


@frozen
class MethodOptimizer:
    stratune: ToyOptimizer = field(factory=ToyOptimizer)
    mixed: bool = True  # some unusable replies and harmful updates

    def __call__(self, request: Request) -> Response:
        prompt = request.messages[0].text()
        system = request.system
        if system == textgrad_prompts.OUTPUT_SYSTEM:
            text = self._on_output(prompt)
        elif system == textgrad_prompts.GRADIENT_SYSTEM:
            text = self._gradient(prompt)
        elif system == textgrad_prompts.UPDATE_SYSTEM:
            text = self._update(prompt)
        elif system == trace2skill_prompts.ANALYST_SYSTEM:
            text = self._analyse(prompt)
        elif system == trace2skill_prompts.MERGE_SYSTEM:
            text = self._merge(prompt)
        elif system == trace2skill_prompts.WRITE_SYSTEM:
            text = self._write(prompt)
        elif system == skillopt_prompts.ANALYST_SYSTEM:
            text = self._propose(prompt)
        elif system == skillopt_prompts.SLOW_SYSTEM:
            text = self._slow(prompt)
        elif system in (skillopt_prompts.MERGE_SYSTEM, skillopt_prompts.FINAL_MERGE_SYSTEM):
            text = self._merge_proposals(prompt)
        elif system == gepa_prompts.REFLECTION_SYSTEM:
            text = self._reflect(prompt)
        elif system == skillopt_prompts.META_SYSTEM:
            text = f"<guidance>Conditional rules per marker help; {len(prompt) % 7} notes.</guidance>"
        else:
            return self.stratune(request)
        return Response(text=text, usage=Usage(input_tokens=len(prompt) // 4,
                                               output_tokens=len(text) // 4))

    def _on_output(self, prompt: str) -> str:
        """TextGrad's gradient through the evaluation: names the markers the output missed."""
        found = _markers(prompt)
        if not found or "<result>score 1.00" in prompt:
            return "The output is right."
        return " ".join(f"The output misses marker [{m}]." for m in found)

    def _gradient(self, prompt: str) -> str:
        """Through the model call: the skill lacks a rule for each marker the output's feedback
        names (the call alone carries no verdict)."""
        found = _markers(prompt.split("<output_feedback>", 1)[-1])
        if not found:
            return "The skill handled this execution; keep it."
        return " ".join(f"The skill lacks the rule: {RULES[m]}" for m in found)

    def _update(self, prompt: str) -> str:
        h = _h(prompt)
        if self.mixed and h % 6 == 0:
            # a tag with no skill after it: unusable, and the run goes on (a reply without the
            # opening tag would end it, as TextGrad's optimizer raises on one)
            return f"I would add a rule about the markers. <{textgrad_prompts.SKILL_TAG}>"
        skill = _skill_of(prompt)
        wanted = [r for r in RULES.values() if r in prompt.split("</skill>", 1)[-1]]
        if self.mixed and h % 6 == 1 and wanted:
            marker = next(m for m, r in RULES.items() if r == wanted[0])
            wanted = [BAD_RULES[marker]]  # an over-general rule: validation should revert it
        tag = textgrad_prompts.SKILL_TAG
        return f"Here is the improved skill.\n<{tag}>\n{_with_rules(skill, wanted)}\n</{tag}>"

    def _analyse(self, prompt: str) -> str:
        trajectory = prompt.split("</skill>", 1)[-1]
        found = _markers(trajectory)
        if found:
            return "".join(f"<lesson>{RULES[m]}</lesson>" for m in found)
        return f"<lesson>{KEEP_TAGS}</lesson>" if _h(prompt) % 3 == 0 else "Nothing general here."

    def _merge(self, prompt: str) -> str:
        lessons = list(dict.fromkeys(all_blocks(prompt.split("\n\n")[0], "lesson")))
        if self.mixed and _h(prompt) % 13 == 0:
            # two over-general rules: together they break every word, their own included
            bad = [BAD_RULES["U"], BAD_RULES["R"]] if set(lessons) & set(RULES.values()) else []
            lessons = [*bad, *(x for x in lessons if x not in RULES.values())] or lessons
        return "Consolidated:\n" + "\n".join(f"<lesson>{x}</lesson>" for x in lessons)

    def _write(self, prompt: str) -> str:
        if self.mixed and _h(prompt) % 7 == 0:
            return "The lessons are already covered by the skill."
        skill = _skill_of(prompt)
        listed = prompt.split("Consolidated lessons:", 1)[-1].split("\n\n")[0]
        lessons = all_blocks(listed, "lesson")
        tag = trace2skill_prompts.SKILL_TAG
        return f"<{tag}>\n{_with_rules(skill, list(lessons))}\n</{tag}>"

    def _reflect(self, prompt: str) -> str:
        """GEPA's reflection: the instructions between the first fences, a rule for each marker
        of an unsolved example; some replies carry an over-general rule, some no fence."""
        parts = prompt.split("```")
        skill = parts[1].strip("\n") if len(parts) > 2 else ""
        unsolved = [block for block in prompt.split("# Example")[1:] if "not solved" in block]
        wanted = [RULES[m] for m in RULES if any(f"[{m}]" in b for b in unsolved)]
        h = _h(prompt)
        if self.mixed and h % 5 == 1 and wanted:
            marker = next(m for m, r in RULES.items() if r == wanted[0])
            wanted = [BAD_RULES[marker]]  # over-general: the minibatch or the front must lose it
        if self.mixed and h % 7 == 0:
            return f"New instructions:\n{_with_rules(skill, wanted[:1])}"  # no fence at all
        return f"Here they are.\n```\n{_with_rules(skill, wanted[:2])}\n```"

    def _propose(self, prompt: str) -> str:
        """Scored append edits: a rule per failing marker, a weak note for successes."""
        shown = prompt.split("</skill>", 1)[-1]
        found = [m for m in _markers(shown) if RULES[m] not in _skill_of(prompt)]
        if not found:
            return _proposal(0.2, KEEP_TAGS) if _h(prompt) % 2 else "Nothing to add."
        m = found[_h(prompt) % len(found)]  # one rule a call: learning takes several epochs
        return _proposal(0.9, RULES[m])

    def _slow(self, prompt: str) -> str:
        """SkillOpt's slow update: guidance naming the rule of each marker still failing."""
        shown = prompt.split("The two skills on the same tasks:", 1)[-1]
        rules = [RULES[m] for m in _markers(shown)]
        tag = skillopt_prompts.SLOW_TAG
        return f"<{tag}>\n" + ("\n".join(rules) or KEEP_TAGS) + f"\n</{tag}>"

    def _merge_proposals(self, prompt: str) -> str:
        listed = prompt.split("</skill>", 1)[-1]
        seen = list(dict.fromkeys(re.findall(r"<new>(.*?)</new>", listed, re.S)))
        if self.mixed and _h(prompt) % 4 == 0 and seen:
            marker = next((m for m, r in RULES.items() if r in seen), "U")
            seen = [BAD_RULES[marker], *seen]  # ranked first: the gate must refuse the step
            return "".join(_proposal(1.0 if i == 0 else 0.5, x) for i, x in enumerate(seen))
        return "".join(_proposal(0.8 if x in RULES.values() else 0.3, x) for x in seen)


def _proposal(score: float, text: str) -> str:
    return f'<proposal score="{score:.2f}"><edit op="append"><new>{text}</new></edit></proposal>'


KEEP_TAGS = "Keep the final answer inside the answer tags."


def run_method(spec, config, task, optimizer: MethodOptimizer | None = None, target=None):
    """A method's whole run against the in-process toy models: (events, last state, llm)."""
    from stratune_core.round.registry import iterate_method
    from tests.support.toy import InProcessLLM

    llm = InProcessLLM(target=target or method_target, optimizer=optimizer or MethodOptimizer())
    events, state = [], None
    for state, evs in iterate_method(spec, config, task, llm):  # noqa: B007
        events.extend(evs)
    return events, state, llm


def unattributed(events, budget: int) -> str | None:
    """None when every unit of budget is attributed: the `TargetExecuted` events' sample ids
    add up to the spent figure of the run, charges only grow, and nothing passes B."""
    import stratune_core.state.events as ev

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


def method_target(request: Request) -> Response:
    """The toy target, plus Iter-CoT's turns: under the chain-of-thought instruction it gets a
    fifth of the words right by luck; a revise turn corrects a word when the number of revise
    turns so far matches its hash (so some are corrected at once, some later, some never); a
    summary keeps the last answer, except that one summary in four gets it wrong again. Every
    other request goes to `toy_target` unchanged."""
    from stratune_core.methods import iter_cot_prompts as prompts
    from tests.support.toy import expected_answer, toy_target

    turns = [m.text() for m in request.messages if m.role == "user"]
    word_line = re.search(r"Word: (\S+) \[(\w)\]", turns[0] if turns else "")
    if prompts.COT_INSTRUCTION not in request.system or word_line is None:
        return toy_target(request)
    word, marker = word_line.groups()
    right = f"<answer>{expected_answer(word, marker)}</answer>"
    first = toy_target(attrs.evolve(request, messages=request.messages[:1]))
    revisions = sum(t in (prompts.REVISE, prompts.REVISE_AGAIN) for t in turns)
    h = _h(word)
    if turns[-1] == prompts.SUMMARY:
        last = request.messages[-2].text()
        text = first.text if h % 4 == 0 else f"Step by step for {word}: {last}"
    elif revisions == 0:
        text = right if h % 5 == 0 else first.text
    else:
        text = right if h % 4 == revisions % 4 and h % 7 else request.messages[-2].text()
    return Response(text=text, usage=Usage(input_tokens=len(request.system) // 4,
                                           output_tokens=len(text) // 4))
