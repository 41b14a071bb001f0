"""Feedback preparation (paper App. D.4): one batched optimizer call per generating round that
diagnoses the shown failures from their expected answers (the released code's verified fixes:
solves the checkable ones blind for the task's scorer to verify) and summarises successful
trajectories; the generation prompts receive the notes the scorer does not contradict."""

from __future__ import annotations

from collections import Counter

from attrs import frozen

import stratune_core.state.events as ev
from llm_cache.records import CallKind, ImageBlock, Message, Request, Response, Role, Usage
from stratune_core.config.knobs import Config
from stratune_core.config.mechanisms import VerifiedFixes
from stratune_core.prompts.prep_prompt import parse_preparation
from stratune_core.records.base import Sample
from stratune_core.records.enums import Strategy
from stratune_core.round.run import run
from tests.support.toy import InProcessLLM, ToyOptimizer, ToyTask, expected_answer


def _blind(**kw) -> Config:
    """A config whose preparation solves checkable failures blind (verified fixes)."""
    return Config(verified_fixes=VerifiedFixes(), **kw)


def _run(config: Config, optimizer=None, task=None):
    llm = InProcessLLM(optimizer=optimizer or ToyOptimizer(style="good"))
    result = run(config, task or ToyTask(), llm)
    return result, llm


def _of(result, cls):
    return [e for e in result.events if isinstance(e, cls)]


def _calls(llm, kind):
    return [r for r in llm.calls if r.kind is kind]


def test_each_generating_round_prepares_once_and_generation_sees_the_notes():
    result, llm = _run(_blind(seed=1, max_rounds=8, selector="rotation"))
    prepared = _of(result, ev.FeedbackPrepared)
    generating = {e.round for e in _of(result, ev.OperatorChosen)}
    assert {e.round for e in prepared} == generating  # I1, I2 and I3 rounds alike
    assert Counter(e.round for e in prepared).most_common(1)[0][1] == 1  # I3's K draws share one
    assert {e.strategy for e in _of(result, ev.OperatorChosen)} == set(Strategy)
    assert len(_calls(llm, CallKind.FEEDBACK_PREPARATION)) == len(prepared)
    assert all(r.role is Role.OPTIMIZER for r in _calls(llm, CallKind.FEEDBACK_PREPARATION))
    verified = [sid for e in prepared for sid in e.verified]
    assert verified, "the toy optimizer solves [U]/[R]/[D]/[S] words blind"
    prompts = [r.messages[0].text() for r in _calls(llm, CallKind.CANDIDATE_GENERATION)]
    assert any("diagnosis (verified)" in p for p in prompts)
    assert any("What the target did right on solved samples" in p for p in prompts)


def test_x_words_are_never_verified_and_the_scorer_decides():
    """[X] words end in "!", which the toy optimizer does not know: its blind answer fails the
    scorer, which contradicts the diagnosis: it is withheld from the generator."""
    result, llm = _run(_blind(seed=2, max_rounds=10))
    samples = {s.id: s for s in ToyTask().split("train")}
    for e in _of(result, ev.FeedbackPrepared):
        assert e.checkable == e.failures  # every toy sample is one text request
        for sid in e.verified:
            assert samples[sid].payload["marker"] != "X"
        assert not set(e.withheld) & set(e.diagnosed)
    x_failures = [sid for e in _of(result, ev.FeedbackPrepared) for sid in e.withheld
                  if samples[sid].payload["marker"] == "X"]
    assert x_failures
    prompts = "\n".join(r.messages[0].text() for r in _calls(llm, CallKind.CANDIDATE_GENERATION))
    assert f"[{x_failures[0]}]" in prompts and "diagnosis (unverified)" not in prompts
    shown = [block for p in prompts.split("- [")[1:] for block in [p.split("\n- ")[0]]
             if block.startswith(f"{x_failures[0]}]")]
    assert shown and all("\n  diagnosis" not in block for block in shown)


def test_checkable_failures_are_shown_blind_with_verified_fixes():
    _, llm = _run(_blind(seed=1, max_rounds=6))
    samples = {s.id: s for s in ToyTask().split("train")}
    for request in _calls(llm, CallKind.FEEDBACK_PREPARATION):
        prompt = request.messages[0].text()
        for block in prompt.split('<sample id="')[1:]:
            sid = block.split('"')[0]
            if 'solve="yes"' in block.split("\n")[0]:
                gold = expected_answer(samples[sid].payload["word"], samples[sid].payload["marker"])
                body = block.split("</sample>")[0]
                assert "expected:" not in body and "problem:" not in body
                assert f"<answer>{gold}</answer>" not in body


@frozen
class _Replying:
    """The good toy optimizer, with preparation calls answered by `reply`."""

    reply: str

    def __call__(self, request: Request) -> Response:
        if request.kind is CallKind.FEEDBACK_PREPARATION:
            return Response(text=self.reply, usage=Usage(input_tokens=1, output_tokens=1))
        return ToyOptimizer(style="good")(request)


def test_a_malformed_reply_degrades_to_no_notes_with_an_event():
    result, llm = _run(_blind(seed=1, max_rounds=5), _Replying("Sure! Here are my thoughts {"))
    prepared = _of(result, ev.FeedbackPrepared)
    assert prepared and all(e.detail.startswith("no usable <sample> block") for e in prepared)
    assert all(not e.diagnosed and not e.verified for e in prepared)
    prompts = [r.messages[0].text() for r in _calls(llm, CallKind.CANDIDATE_GENERATION)]
    assert prompts and not any("diagnosis" in p for p in prompts)
    assert isinstance(result.events[-1], ev.RunFinished)


def test_a_right_answer_without_a_diagnosis_is_still_verified_and_a_wrong_one_never():
    task = ToyTask()
    answers = "\n".join(
        f'<sample id="{s.id}">\nanswer: <answer>'
        f'{expected_answer(s.payload["word"], s.payload["marker"]) if i % 2 else "nope"}'
        "</answer>\n</sample>" for i, s in enumerate(task.split("train")))
    result, _ = _run(_blind(seed=1, max_rounds=4), _Replying(answers), task)
    ids = [s.id for s in task.split("train")]
    for e in _of(result, ev.FeedbackPrepared):
        assert set(e.verified) == set(e.diagnosed)  # no wrong/needs lines: only checked ones
        assert all(ids.index(sid) % 2 == 1 for sid in e.verified)
    assert any(e.verified for e in _of(result, ev.FeedbackPrepared))


def test_the_switch_turns_preparation_off():
    result, llm = _run(Config(seed=1, max_rounds=6, feedback_preparation=False))
    assert not _calls(llm, CallKind.FEEDBACK_PREPARATION) and not _of(result, ev.FeedbackPrepared)
    selection = [r.messages[0].text() for r in _calls(llm, CallKind.STRATEGY_SELECTION)]
    assert selection and all("feedback preparation: off" in p for p in selection)
    on, on_llm = _run(Config(seed=1, max_rounds=6))
    assert on.spent == len(on.state.ledger)  # preparation and its checks cost no execution
    assert _calls(on_llm, CallKind.FEEDBACK_PREPARATION)


@frozen
class _ImageToyTask(ToyTask):
    """The toy task with a page image in every request: an optimizer answering in text cannot
    be checked, so its failures are shown with their expected answers."""

    def requests(self, skill: str, sample: Sample, model: str) -> tuple[Request, ...]:
        (request,) = super().requests(skill, sample, model)
        image = ImageBlock(media_type="image/png", data="iVBORw0KGgo=")
        text = request.messages[0].content[0]
        return (Request(role=request.role, model=model, system=request.system,
                        messages=(Message.user((text, image)),), max_tokens=64),)


def test_a_task_that_cannot_check_gets_unverified_diagnoses_with_the_expected_answer():
    result, llm = _run(_blind(seed=1, max_rounds=5), task=_ImageToyTask())
    prepared = _of(result, ev.FeedbackPrepared)
    assert prepared and all(e.checkable == 0 and not e.verified for e in prepared)
    prompt = _calls(llm, CallKind.FEEDBACK_PREPARATION)[0].messages[0].text()
    assert 'solve="no"' in prompt and "expected: " in prompt and 'solve="yes"' not in prompt


def test_the_paper_profile_diagnoses_each_failure_with_its_expected_answer():
    """Paper: preparation summarises the failures for the generation calls; the optimizer is
    not tested on them, so it sees what the generator sees: expected answer and the problem."""
    result, llm = _run(Config(seed=1, max_rounds=6, selector="rotation"))
    prepared = _of(result, ev.FeedbackPrepared)
    assert prepared and all(e.checkable == 0 and not e.verified for e in prepared)
    assert any(e.diagnosed for e in prepared)
    for request in _calls(llm, CallKind.FEEDBACK_PREPARATION):
        prompt = request.messages[0].text()
        assert 'solve="yes"' not in prompt and "answer: your own final answer" not in prompt
        failures = [b for b in prompt.split('<sample id="')[1:] if 'solve="no"' in b.split("\n")[0]]
        assert failures and all("expected: " in b and "problem: " in b for b in failures)
        assert "Then write the rule the skill lacks" in prompt and "rule: " in prompt
    generation = "\n".join(r.messages[0].text()
                           for r in _calls(llm, CallKind.CANDIDATE_GENERATION))
    assert "diagnosis: " in generation and "rule the skill lacks: " in generation
    assert "verified" not in generation
    selection = [r.messages[0].text() for r in _calls(llm, CallKind.STRATEGY_SELECTION)]
    assert all("from its expected answer and the scorer's account" in p for p in selection)


def test_a_diagnosis_asking_for_the_failed_output_is_withheld():
    """The scorer graded the target's output as a failure: a diagnosis whose rule asks
    for that same output would point the generator back at it."""
    task = ToyTask()
    outputs: dict[str, str] = {}

    @frozen
    class _Echoing:
        def __call__(self, request: Request) -> Response:
            if request.kind is not CallKind.FEEDBACK_PREPARATION:
                return ToyOptimizer(style="good")(request)
            prompt = request.messages[0].text()
            blocks = []
            for block in prompt.split('<sample id="')[1:]:
                sid = block.split('"')[0]
                if "target output: " not in block or 'solved="yes"' in block.split("\n")[0]:
                    continue
                said = block.split("target output: ")[1].split("\n")[0]
                outputs[sid] = said
                blocks.append(f'<sample id="{sid}">\nwrong: it was wrong\n'
                              f"rule: the correct answer should be '{said}'\n</sample>")
            return Response(text="\n".join(blocks), usage=Usage(input_tokens=1, output_tokens=1))

    result, llm = _run(Config(seed=1, max_rounds=4), _Echoing(), task)
    prepared = _of(result, ev.FeedbackPrepared)
    assert any(e.withheld for e in prepared)
    for e in prepared:
        assert all(len(outputs[sid]) >= 4 for sid in e.withheld)
        assert all(len(outputs[sid]) < 4 for sid in e.diagnosed)
    generation = "\n".join(r.messages[0].text()
                           for r in _calls(llm, CallKind.CANDIDATE_GENERATION))
    for e in prepared:
        for sid in e.withheld:
            assert f"the correct answer should be '{outputs[sid]}'" not in generation


def test_the_reply_parser_reads_what_weak_models_write():
    reply = """Sure! Here you go.
<sample id="s1">
**wrong:** answered in lower case
- rule: upper case
answer: <answer>APPLE</answer>
</sample>
<sample id='s2'>
worked: followed the [R] rule
<sample id=s3>
Wrong: kept the word
answer: line one
line two
</sample>
<sample id="s1">
wrong: a second block for s1 is ignored
</sample>
<sample>no id</sample>"""
    notes = parse_preparation(reply)
    assert notes["s1"] == {"wrong": "answered in lower case", "rule": "upper case",
                           "answer": "<answer>APPLE</answer>"}
    assert notes["s2"] == {"worked": "followed the [R] rule"}
    assert notes["s3"] == {"wrong": "kept the word", "answer": "line one\nline two"}
    assert set(notes) == {"s1", "s2", "s3"}
    for junk in ("", "no blocks at all", "<sample id=", "{\"s1\": {\"wrong\": 1}}"):
        assert parse_preparation(junk) == {}
    long = parse_preparation('<sample id="x">\nwrong: ' + "w" * 5000 + "\n</sample>")
    assert len(long["x"]["wrong"]) == 300


def test_the_rule_the_failures_share_reaches_the_generator():
    """The paper's preparation summarises the failures: besides a note per failure, the one rule
    they share, shown to the generation calls after the failures."""
    rule = "Reply with the transformed word only."

    @frozen
    class _Sharing:
        def __call__(self, request: Request) -> Response:
            reply = ToyOptimizer(style="good")(request)
            if request.kind is not CallKind.FEEDBACK_PREPARATION:
                return reply
            return Response(text=f"{reply.text}\n<shared>\nrule: {rule}\n</shared>",
                            usage=reply.usage)

    result, llm = _run(Config(seed=1, max_rounds=3), _Sharing())
    prepared = _of(result, ev.FeedbackPrepared)
    assert prepared and all(e.shared for e in prepared)
    generation = [r.messages[0].text() for r in _calls(llm, CallKind.CANDIDATE_GENERATION)]
    line = f"The rule the failures share, from feedback preparation: {rule}"
    assert generation and all(line in p for p in generation)
    assert all(p.index(line) > p.index("Failures (") for p in generation)


def test_the_shared_rule_parser_and_its_contradiction_check():
    from stratune_core.prompts.prep_prompt import parse_shared_rule
    from stratune_core.round.prep import asks_for

    reply = ('<sample id="a">\nrule: x\n</sample>\n<shared>\n**Rule:** Answer with the value '
             "alone.\n</shared>")
    assert parse_shared_rule(reply) == "Answer with the value alone."
    # a shared block a weak model leaves unclosed, or with its label missing
    assert parse_shared_rule("<shared>\nrule: Be brief.") == "Be brief."
    assert parse_shared_rule("<shared>Be brief.</shared>") == ""
    assert parse_shared_rule("no block") == ""
    assert asks_for("Always answer 'The total is 5.'", "the total is  5.")
    assert not asks_for("Answer with 5 only.", "5")  # too short to count as a quotation
