"""A toy world for testing the method: a task, a scripted target and a scripted optimizer.

Test doubles only (never used in `traces/`). Both models are pure functions of the request, so
a run through the real cache replays exactly and two runs give the same events.

The task: each sample is a word with a marker; the expected answer is the word transformed by
its marker ([U] uppercase, [R] reversed, [P] plain). The target applies the rules it finds in
the skill: a *conditional* rule ("When marked [U], ...") helps exactly the marked samples; an
*unconditional* one ("Always answer in UPPERCASE") helps [U] and breaks every other sample, so
candidate evaluation must reject it through the regression checks. A "lucky" rule helps or hurts
[P] samples by a hash of the word: noisy gains that screening may see and validation not.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

import xxhash
from attrs import frozen

from llm_cache.records import Message, Request, Response, Role, Usage
from stratune_core.records.base import Sample, Score, TaskInfo
from stratune_core.records.parts import as_used

INITIAL_SKILL = "Answer with the word.\nReturn the final answer inside <answer>...</answer> tags."

WORDS = (
    "apple", "river", "stone", "cloud", "ember", "frost", "grain", "harbor", "island", "jungle",
    "kettle", "lantern", "meadow", "needle", "orchard", "pepper", "quartz", "rocket", "saddle",
    "timber", "umbrella", "velvet", "walnut", "yonder", "zephyr", "anchor", "basket", "candle",
    "dragon", "engine", "falcon", "garden", "hammer", "insect", "jacket", "kitten",
)
MARKERS = ("U", "R", "D", "S", "P", "X")  # [X] words end in "!", which no rule teaches

RULES = {
    "U": "When the word is marked [U], answer in UPPERCASE.",
    "R": "When the word is marked [R], answer with the word REVERSED.",
    "D": "When the word is marked [D], answer with the word written twice.",
    "S": "When the word is marked [S], answer with its letters SORTED.",
}
BAD_RULES = {
    "U": "Always answer in UPPERCASE.",
    "R": "Always answer with the word REVERSED.",
    "D": "Always write the word twice.",
    "S": "Always sort the letters.",
}
TRANSFORMS = {
    "U": str.upper,
    "R": lambda w: w[::-1],
    "D": lambda w: w + w,
    "S": lambda w: "".join(sorted(w)),
}
OPTION_NAMES = {"U": "uppercase", "R": "reversed", "D": "written twice", "S": "letters sorted",
                "P": "unchanged", "X": "with an exclamation mark"}
LUCKY_RULE = "When the word is marked [P], double-check the spelling."
# Helps its marker, breaks a few [P] words: on a continuous task a small net gain below the
# screening threshold with balanced wins and losses, i.e. a candidate saved for final selection.
TRADE_RULE = "When the word is marked [P], add emphasis if it feels important."
# Adds "!" to a third of all words (by hash), whatever their marker: fixes those [X] words and
# breaks the solved others. With a rule for a new marker: wins and losses in several strata,
# the released code's "branch" (saved without being accepted).
EMPHASIS_RULE = "When a word seems emphatic, end the answer with an exclamation mark."
# A coin flip (only the "full" style writes it): fixes the [X] words of even hash, spoils the
# [U] words with a full stop while the skill has no rule for them. On a continuous task ([U]
# then half credit, unsolved) a gain of 0 on average with no regression among solved samples:
# screening may pass it on luck and validation then lose.
COIN_RULE = "When the word is marked [X] or [U], trust your first instinct."
# what the "full" style's rewrites leave out: rules that trade some samples for others
NOISE_RULES = (TRADE_RULE, LUCKY_RULE, EMPHASIS_RULE, COIN_RULE)


def _h(text: str) -> int:
    return xxhash.xxh32_intdigest(text.encode())


def make_samples(n: int, offset: int = 0, markers: Sequence[str] = MARKERS) -> tuple[Sample, ...]:
    out = []
    for i in range(n):
        word = WORDS[(i + offset) % len(WORDS)] + ("" if i + offset < len(WORDS) else str(i + offset))
        marker = markers[(i + offset) % len(markers)]
        out.append(Sample(id=f"s{i + offset:03d}", stratum=marker, payload={"word": word, "marker": marker}))
    return tuple(out)


def expected_answer(word: str, marker: str) -> str:
    if marker == "X":
        return word + "!"
    return TRANSFORMS[marker](word) if marker in TRANSFORMS else word


MARKUP = ("<answer>", "</answer>")  # what the toy scorer parses


@frozen
class ToyTask:
    n_train: int = 48
    n_test: int = 24
    initial: str = INITIAL_SKILL
    continuous: bool = False  # half credit for an answer right but for letter case
    markers: tuple[str, ...] = MARKERS  # the markers its samples cycle through

    @property
    def info(self) -> TaskInfo:
        if self.continuous:
            return TaskInfo(name="toy-continuous", initial_skill=self.initial, success_threshold=0.9,
                            binary=False, eps0=0.001, max_tokens=64, answer_markup=MARKUP)
        return TaskInfo(name="toy", initial_skill=self.initial, success_threshold=1.0, binary=True,
                        eps0=0.0025, max_tokens=64, answer_markup=MARKUP)

    def split(self, name: str) -> tuple[Sample, ...]:
        if name == "train":
            return make_samples(self.n_train, markers=self.markers)
        return make_samples(self.n_test, offset=1000, markers=self.markers)

    def requests(self, skill: str, sample: Sample, model: str) -> tuple[Request, ...]:
        p = sample.payload
        return (Request(role=Role.TARGET, model=model, system=as_used(skill),
                        messages=(Message.user(f"Word: {p['word']} [{p['marker']}]"),), max_tokens=64),)

    def score(self, sample: Sample, responses: tuple[Response, ...]) -> Score:
        text = responses[0].text if responses else ""
        m = re.search(r"<answer>(.*?)</answer>", text)
        got = m.group(1).strip() if m else ""
        want = expected_answer(sample.payload["word"], sample.payload["marker"])
        ok = got == want
        value = 1.0 if ok else 0.5 if self.continuous and got.lower() == want.lower() else 0.0
        return Score(value=value, output=text[:200],
                     summary="" if ok else f"expected {want!r}, got {got or 'no <answer> tag'!r} for marker [{sample.payload['marker']}]")

    def describe(self, sample: Sample) -> str:
        return f"Word: {sample.payload['word']} [{sample.payload['marker']}]"

    def expected(self, sample: Sample) -> str:
        return expected_answer(sample.payload["word"], sample.payload["marker"])

    # The optional capabilities the released profile's feedback blocks use (stratune_core/records/task.py).

    def trajectory(self, sample: Sample, output: str) -> str:
        """Two steps: read the marker, then answer; + where the output shows the step done."""
        word, marker = sample.payload["word"], sample.payload["marker"]
        want = expected_answer(word, marker)
        answered = "+" if f"<answer>{want}</answer>" in output else "-"
        return f"Word: {word} [{marker}]\n    +read the marker [{marker}] | {answered}answer {want}"

    def answer_options(self, sample: Sample) -> tuple[tuple[str, bool], ...]:
        """Every sample offers the same six transformations; its marker's is the right one."""
        marker = sample.payload["marker"]
        return tuple((name, marker == mk) for mk, name in OPTION_NAMES.items())


def toy_target(request: Request) -> Response:
    """Applies the rules written in the skill to the word."""
    skill = request.system
    m = re.search(r"Word: (\S+) \[(\w)\]", request.user_text())
    if not m:
        return Response(text="I do not understand.", usage=Usage(input_tokens=10, output_tokens=4))
    word, marker = m.group(1), m.group(2)
    answer = word
    for mk, transform in TRANSFORMS.items():
        # A worked example copied into the skill teaches its own marker, like a conditional rule.
        taught = RULES[mk] in skill or re.search(rf"\[{mk}\] -> ", skill) is not None
        if BAD_RULES[mk] in skill or (taught and marker == mk):
            answer = transform(answer)
    if LUCKY_RULE in skill and marker == "P" and _h(word) % 3 == 0:
        answer = answer.capitalize()
    if TRADE_RULE in skill and marker == "P" and _h(word) % 4 == 1:
        answer = answer + "!"
    if EMPHASIS_RULE in skill and _h(word) % 3 == 0:
        answer = answer + "!"
    if COIN_RULE in skill and marker == "X" and _h(word) % 2 == 0:
        answer = answer + "!"
    if COIN_RULE in skill and marker == "U" and RULES["U"] not in skill:
        answer = answer + "."
    if "<answer>" not in skill:
        return Response(text=f"The answer is {answer}.", usage=Usage(input_tokens=len(skill) // 4, output_tokens=6))
    return Response(text=f"<answer>{answer}</answer>", usage=Usage(input_tokens=len(skill) // 4, output_tokens=5))


def _candidate(form: str, theme: str, body: str, sources: str = "") -> str:
    src = f"<sources>{sources}</sources>\n" if sources else ""
    return f"<candidate>\n<form>{form}</form>\n<theme>{theme}</theme>\n{src}{body}\n</candidate>"


def _skill_of(prompt: str) -> str:
    m = re.search(r"<skill>\n(.*?)\n</skill>", prompt, re.S)
    return m.group(1) if m else ""


MIXED = {
    "mixed": ("good", "good", "trade", "good", "bad", "bad", "lucky", "broken", "good", "lucky", "trade", "broken"),
    "wide": ("good", "lucky+", "trade-u", "good", "bad", "wide-u", "trade", "broken", "good", "wide", "trade-u", "bad"),
    "full": ("good", "lucky+", "coin", "good", "bad", "wide-u", "good", "broken", "good", "wide", "coin", "bad"),
}


@frozen
class ToyOptimizer:
    """Writes candidates from the failures it is shown. `style` picks its habits:
    - "good": conditional rules, grounded examples, format-keeping rewrites;
    - "mixed": a hash of the prompt decides between good, bad (unconditional), lucky and
      broken (invalid patch, ungrounded example, format-changing rewrite, unparseable) replies;
    - "wide": as "mixed" with more trades, a good rule plus the emphasis rule (a candidate that
      wins and loses across strata) in place of the lucky replies, and a good rule plus the
      lucky one (on a continuous task more small losses than large gains); [U] comes only with
      a trade or the emphasis rule, whose gain on a continuous task is then close to 0 (noise
      decides screening and validation); it picks I2 twice as often as I1 or I3;
    - "full": as "wide", but [U] is learnt like any marker, coin flips (`COIN_RULE`) replace the
      trades, and its good rewrites leave out the rules that trade samples (`NOISE_RULES`): on a
      task without [X] words (`ToyTask.markers`) s_t can come to solve every sample;
    - "nonsense": sound strategy choices, but no candidate at all: a model that cannot follow
      the candidate format;
    `strategy_plan` names the strategies it picks in selection calls, by hash of the prompt."""

    style: str = "mixed"
    strategy_plan: Sequence[str] = ("I1", "I2", "I3")
    form_plan: Sequence[str] = ("F1", "F2", "F3", "F4")

    def __call__(self, request: Request) -> Response:
        prompt = request.messages[0].text()
        repair = len(request.messages) > 1
        h = _h(prompt)  # the prompt alone (I3 drafts differ by their "draft k of K" line)
        if request.system.startswith("You are the strategy controller"):
            text = self._select(prompt, h, repair)
        elif request.system.startswith("You diagnose"):
            text = self._prepare(prompt, h)
        else:
            text = self._generate(prompt, h, repair)
        return Response(text=text, usage=Usage(input_tokens=len(prompt) // 4, output_tokens=len(text) // 4))

    def _select(self, prompt: str, h: int, repair: bool) -> str:
        allowed = re.findall(r'"(I\d)"', re.search(r'"strategy" \(exactly one of ([^)]*)\)', prompt).group(1))
        forms = re.findall(r'"(F\d)"', re.search(r'"form" \(exactly one of ([^)]*)\)', prompt).group(1))
        if self.style in MIXED and h % 7 == 0 and (not repair or h % 21 == 0):
            # not JSON: exercises the repair call, and (1 time in 3) the fallback to I1
            return "I would go with iterative refinement here."
        wanted = ("I1", "I2", "I2", "I3") if self.style in ("wide", "full") else self.strategy_plan
        plan = [s for s in wanted if s in allowed] or allowed
        strategy = plan[h % len(plan)]
        fplan = [f for f in self.form_plan if f in forms] or forms
        form = None if strategy == "I1" and len(allowed) > 1 else fplan[(h // 7) % len(fplan)]
        return "Thinking...\n" + json.dumps({"strategy": strategy, "form": form, "why": f"plan pick {h % 100}"})

    def _prepare(self, prompt: str, h: int) -> str:
        """Feedback preparation: solves blind failures by the transforms it knows (so [X]
        words, which no rule teaches, stay unverified), diagnoses each, notes what worked.
        The mixed style sometimes answers with no block at all, or with a wrong answer."""
        if self.style in MIXED and h % 9 == 0:
            return "The failures look like formatting problems to me."
        blocks = []
        for sid, attrs_, body in re.findall(r'<sample id="(\w+)" ([^>]*)>\n(.*?)\n</sample>', prompt, re.S):
            m = re.search(r"Word: (\S+) \[(\w)\]", body)
            if m is None:
                continue
            word, marker = m.groups()
            if 'solved="yes"' in attrs_:
                blocks.append(f'<sample id="{sid}">\nworked: applied the rule for words marked [{marker}]\n</sample>')
                continue
            answer = TRANSFORMS[marker](word) if marker in TRANSFORMS else word
            if self.style in MIXED and _h(sid) % 5 == 0:
                answer = word  # a wrong blind answer: the diagnosis stays unverified
            blocks.append(
                f'<sample id="{sid}">\nwrong: the target ignored what a word marked [{marker}] needs\n'
                f"rule: the transformation for words marked [{marker}]\nanswer: <answer>{answer}</answer>\n</sample>"
            )
        return "Diagnoses:\n\n" + "\n\n".join(blocks)

    def _generate(self, prompt: str, h: int, repair: bool) -> str:
        if self.style == "nonsense":
            return "I am a small model and I like turtles."
        skill = _skill_of(prompt)
        only = re.search(r"in form (F\d) only", prompt)
        forms = [only.group(1)] if only else re.findall(r"^- (F\d): ", prompt, re.M)
        # Verified diagnoses point at the markers worth a rule; else the problem lines do.
        verified = re.findall(r"diagnosis \(verified\): the target ignored what a word marked \[(\w)\]", prompt)
        markers = [m for m in RULES if m in verified] or [m for m in RULES if f"marker [{m}]" in prompt]
        marker = markers[h % len(markers)] if markers else "U"
        n = 2 if "Write exactly 2 candidates" in prompt else 1
        blocks = []
        for i in range(n):
            form = forms[(h + i) % len(forms)]
            blocks.append(self._one(prompt, skill, form, marker, (h >> (3 * i)) % 12, repair))
        return "Here are my candidates.\n\n" + "\n\n".join(blocks)

    def _one(self, prompt: str, skill: str, form: str, marker: str, roll: int, repair: bool) -> str:
        mode = "trade" if self.style == "trade" else "good"
        if self.style in MIXED:
            mode = MIXED[self.style][roll]
        if mode in ("trade-u", "wide-u"):  # continuous: +0.5 per [U] word, against the [P]
            mode, marker = mode[:-2], "U"  # losses: a gain near 0, noise decides the stages
        elif self.style == "wide" and marker == "U" and mode == "good":
            mode = "trade"  # [U] is learnt only with a trade: near-zero candidates all run long
        if mode == "broken" and repair and roll == 11:  # a repair call fixes some broken replies
            mode = "good"
        if mode == "broken":
            return {
                "F1": _candidate("F1", "fix", '<edit op="replace"><old>text that is not in the skill</old><new>x</new></edit>'),
                "F2": _candidate("F2", "examples", '<edit op="append">\n[s999] Word: made [U] -> MADE\n</edit>', "s999"),
                "F3": "I cannot write a candidate for this.",
                "F4": _candidate("F4", "rewrite", "<rewrite>\nAnswer briefly.\n</rewrite>"),
            }[form]
        rule = {
            "good": RULES[marker],
            "bad": BAD_RULES[marker],
            "lucky": LUCKY_RULE,
            "trade": f"{RULES[marker]} {TRADE_RULE} {LUCKY_RULE}",
            "wide": f"{RULES[marker]} {EMPHASIS_RULE}",
            "lucky+": f"{RULES[marker]} {LUCKY_RULE}",  # big gains, small losses (continuous)
            "coin": COIN_RULE,
        }[mode]
        if form == "F2":
            offered = re.findall(r"^\[s\d+\] .*$", prompt, re.M)
            lines = [ln for ln in offered if f"[{marker}] ->" in ln] or offered
            if lines and mode == "good":
                return _candidate("F2", f"examples for [{marker}]", f'<edit op="append">\nExamples:\n{lines[0]}\n</edit>', lines[0][1:5])
            form = "F1"
        if form == "F4":
            kept = skill
            if self.style == "full" and mode == "good":
                for noise in NOISE_RULES:
                    kept = kept.replace(f" {noise}", "").replace(noise, "")
            return _candidate("F4", f"rewrite with {mode} rule", f"<rewrite>\n{kept}\n{rule}\n</rewrite>")
        if form == "F3":
            return _candidate("F3", f"procedure ({mode})", f'<edit op="insert_after"><anchor>Answer with the word.</anchor><new>Procedure: read the marker first. {rule}</new></edit>')
        return _candidate("F1", f"rule ({mode})", f'<edit op="append">\n{rule}\n</edit>')


def body_request(body: Any, role: Role) -> Request:
    """A Messages API body (as the fake server receives it) as the request it was sent for."""
    system = body.get("system", "")
    if isinstance(system, list):
        system = "".join(b.get("text", "") for b in system)
    messages = []
    for m in body["messages"]:
        content = m["content"]
        text = content if isinstance(content, str) else "".join(
            b.get("text", "") for b in content if b.get("type") == "text"
        )
        messages.append(Message(role=m["role"], content=text))
    return Request(role=role, model=body["model"], system=system, messages=tuple(messages),
                   max_tokens=body["max_tokens"])


def toy_responder(optimizer: ToyOptimizer | None = None):
    """A fake-server responder: the Messages API body goes to the toy target or optimizer,
    chosen by the model name ("toy-target" / anything else)."""
    opt = optimizer or ToyOptimizer()

    def respond(body) -> str:
        role = Role.TARGET if body["model"] == TARGET_MODEL else Role.OPTIMIZER
        req = body_request(body, role)
        return (toy_target(req) if role is Role.TARGET else opt(req)).text

    return respond


TARGET_MODEL = "toy-target"
OPTIMIZER_MODEL = "toy-optimizer"


class InProcessLLM:
    """Answers requests directly (no cache): for tests of the pure core."""

    def __init__(self, target=toy_target, optimizer: ToyOptimizer | None = None) -> None:
        self.target = target
        self.optimizer = optimizer or ToyOptimizer()
        self.calls: list[Request] = []

    def complete(self, requests: Sequence[Request]) -> tuple[Response, ...]:
        self.calls.extend(requests)
        return tuple(
            self.target(r) if r.role is Role.TARGET else self.optimizer(r) for r in requests
        )
