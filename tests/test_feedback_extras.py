"""The released code's further blocks of E_t (`feedback_extras.py`, rendered by
`prompt_extras.py`): contrast samples, the longitudinal block, trajectories of multi-step tasks,
gold pairs and answer statistics. Each is built only when its field is on, and a prompt without
them is the paper's prompt byte for byte."""

from __future__ import annotations

from llm_cache.records import Response
from stratune_core.budget.ledger import Ledger
from stratune_core.config.knobs import Config
from stratune_core.feedback.execution import Extras, build_feedback
from stratune_core.operators.refinement import Refinement
from stratune_core.prompts.extras import GOLD_PAIRS_HEAD
from stratune_core.prompts.templates import generation_prompt, selection_prompt
from stratune_core.records.base import Execution, Sample
from stratune_core.records.enums import Form, Strategy
from stratune_core.round.extras import extend_feedback, option_stats
from stratune_core.state.context import Env
from stratune_core.state.state import initial_state
from stratune_core.tasks.common import Splits
from stratune_core.tasks.livemath import LiveMathItem, LiveMathTask
from tests.support.toy import InProcessLLM, ToyTask, toy_target
from tests.test_task_mind2web import _task as mind2web_task

ALL = dict(feedback_contrast=True, feedback_longitudinal=True, feedback_trajectories=True,
           feedback_gold_pairs=True, feedback_global_stats=True)


def _case(config: Config, task: ToyTask, *, round_index: int = 0, new_skill: bool = False):
    """A state whose current skill ran its batch and some other samples (toy target answers)."""
    state = initial_state(config, task)
    env = Env.build(config, task, InProcessLLM())
    if new_skill:  # s_t teaches [U] and [R]: improves those, keeps the rest
        text = state.current_text + "\nWhen the word is marked [U], answer in UPPERCASE.\n" \
            "When the word is marked [R], answer with the word REVERSED."
        state, sid, _ = state.with_skill(text, state.current_id)
        state = state.evolve(current_id=sid)
    batch = state.batches[round_index % len(state.batches)]
    ran = dict.fromkeys([*(s.id for s in task.split("train")[:30]), *batch])
    execs = []
    for skill in dict.fromkeys((next(iter(state.skills)), state.current_id)):  # s0, s_t
        for sample_id in ran:
            sample = env.samples[sample_id]
            score = task.score(sample, (toy_target(_request(task, state.text(skill), sample)),))
            execs.append(Execution(skill_id=skill, sample_id=sample_id, score=score.value,
                                   solved=score.value >= env.threshold, output=score.output))
    state = state.evolve(ledger=Ledger.of(execs), round=round_index)
    fb = build_feedback(task=task, skill_id=state.current_id, batch_ids=batch, ledger=state.ledger,
                        samples=env.samples, max_failures=12, max_examples=10,
                        train_order=env.train_ids)
    return state, env, fb


def _request(task: ToyTask, skill: str, sample: Sample):
    (request,) = task.requests(skill, sample, "toy-target")
    return request


def _prompt(fb, forms=(Form.F1,)) -> str:
    return generation_prompt(skill_text="Answer with the word.", feedback=fb, forms=forms,
                             n_candidates=1, max_edits=6, budget=30_000)


def test_contrast_is_three_by_seeded_order_then_the_longest_answers():
    task = ToyTask(n_train=160, continuous=True)  # batches of 10
    state, env, fb = _case(Config(feedback_contrast=True), task, new_skill=True)
    solved = [x for x in fb.batch_ids if state.ledger.get(fb.skill_id, x).solved]
    extended, (event,) = extend_feedback(state, env, fb)
    picked = list(event.contrast)
    assert len(picked) == min(5, len(solved)) and set(picked) <= set(solved)
    rest = [x for x in solved if x not in picked[:3]]
    longest = sorted(len(task.expected(env.samples[x])) for x in rest)[-2:]
    assert sorted(len(task.expected(env.samples[x])) for x in picked[3:]) == longest
    assert extended.extras.long_gold == 2
    text = _prompt(extended)
    assert "Solved samples the revision must not break (contrast):" in text
    assert "The last 2 have the longest expected answers" in text
    binary, (event,) = extend_feedback(*_case(Config(feedback_contrast=True),
                                              ToyTask(n_train=160), new_skill=True))
    assert binary.extras.long_gold == 0 and len(event.contrast) <= 3


def test_the_longitudinal_block_compares_s_t_with_s0_from_the_second_epoch():
    config = Config(feedback_longitudinal=True)
    task = ToyTask()
    for round_index, new_skill in ((3, True), (16, False)):
        state, env, fb = _case(config, task, round_index=round_index, new_skill=new_skill)
        assert extend_feedback(state, env, fb) == (fb, ())
    state, env, fb = _case(config, task, round_index=16, new_skill=True)
    extended, (event,) = extend_feedback(state, env, fb)
    block = extended.extras.longitudinal
    improved, regressed, persistent = event.longitudinal
    assert improved > 0 and regressed == 0 and persistent > 0  # [U]/[R] learnt, [D]/[S]/[X] not
    assert block.counts == (improved, regressed, persistent)
    assert len(block.improved) == min(6, improved) and len(block.persistent) == min(8, persistent)
    assert block.improved[0].endswith("| 0.00 -> 1.00")
    text = _prompt(extended)
    assert f"{improved} improved, 0 regressed, {persistent} still failing" in text
    assert "- improved: [" in text


def test_trajectories_render_solved_batch_samples_step_by_step():
    state, env, fb = _case(Config(feedback_trajectories=True), ToyTask(n_train=160),
                           new_skill=True)
    extended, (event,) = extend_feedback(state, env, fb)
    assert 0 < len(event.trajectories) <= 6
    assert all(state.ledger.get(fb.skill_id, x).solved for x in event.trajectories)
    assert all("+answer" in t for t in extended.extras.trajectories)
    assert "Solved multi-step samples, each gold step marked +" in _prompt(extended)


def test_a_mind2web_trajectory_marks_each_gold_step():
    task = mind2web_task()
    sample = task.split("train")[0]
    responses = tuple(Response(text=t) for t in (
        "ACTION: CLICK [10]", "ACTION: TYPE [11] [Bob]", "ACTION: SELECT [999] [7 pm]"))
    output = task.score(sample, responses).output
    assert task.trajectory(sample, output) == (
        "[resy/Travel] Book a table\n    +[button] Go -> CLICK | +[input] Name -> TYPE: Bob | "
        "-[div] X -> CLICK | -[select] Time -> SELECT: 7 pm")


def test_gold_pairs_are_shown_whatever_the_form():
    state, env, fb = _case(Config(feedback_gold_pairs=True), ToyTask(), new_skill=True)
    assert fb.examples
    assert GOLD_PAIRS_HEAD not in _prompt(fb)  # the paper shows them to F2 only
    extended, (event,) = extend_feedback(state, env, fb)
    assert event.gold_pairs == tuple(e.sample_id for e in fb.examples)
    text = _prompt(extended)
    assert GOLD_PAIRS_HEAD in text and fb.examples[0].line in text
    assert {e.sample_id for e in fb.examples} <= extended.shown_ids(examples=False)
    f2 = _prompt(extended, forms=(Form.F1, Form.F2))
    assert GOLD_PAIRS_HEAD not in f2 and "worked examples (F2)" in f2


def _livemath(n: int) -> LiveMathTask:
    meta = "One of the remaining options is correct, but a stronger result can be proven."
    samples = tuple(Sample(id=f"q{i}", payload=LiveMathItem(
        question=f"Q{i}?", choices=(("A", f"x = {i}"), ("B", meta), ("C", "none")),
        correct_label="B" if i % 3 else "A")) for i in range(n))
    return LiveMathTask(splits=Splits(name="m", train=samples, test=samples[:1]),
                        initial_skill="s")


def test_answer_statistics_give_base_rates_of_recurring_options():
    task = _livemath(15)
    rows = option_stats(task, task.split("train"))
    assert len(rows) == 2  # "x = i" recurs in no two samples
    assert rows[0].startswith('- an option reading "none" appears in 15 of 15')
    assert "correct answer in 10 of them (67%)" in rows[1] and "stronger result" in rows[1]
    assert option_stats(_livemath(11), _livemath(11).split("train")) == ()  # under 12: nothing
    toy = option_stats(ToyTask(), ToyTask().split("train"))
    assert len(toy) == 5 and all("correct answer in 8 of them (17%)" in r for r in toy)


def test_the_selection_digest_names_the_blocks_and_a_plain_feedback_is_unchanged():
    state, env, fb = _case(Config(**ALL), ToyTask(), round_index=16, new_skill=True)
    extended, _ = extend_feedback(state, env, fb)

    def select(feedback) -> str:
        return selection_prompt(feedback=feedback, history=None, refinement=Refinement(),
                                intermediate_text=None, strategies=list(Strategy),
                                forms=list(Form), checkable=None, budget=30_000)

    digest = select(extended)
    for line in ("- since the initial skill:", "- solved multi-step trajectories:",
                 "- the solved samples are shown as input -> answer pairs to every form",
                 "- answer-option statistics of the training set: 5 rows"):
        assert line in digest
    assert "Answer options across the training set" in _prompt(extended)
    plain = extended.evolve(extras=Extras())
    assert select(plain) == select(fb) and _prompt(plain) == _prompt(fb)
    off_state, off_env, off_fb = _case(Config(), ToyTask(), round_index=16, new_skill=True)
    assert extend_feedback(off_state, off_env, off_fb) == (off_fb, ())
