"""Feedback preparation (paper App. D.4, Table 8), whose blind solves also make the released
code's "verified fixes" (`round/verified_fixes.py`).

Before candidates are written, the optimizer diagnoses each shown failure (what the target did
wrong, and the rule the skill lacks, addressed to the target model) and summarises a few successful
trajectories (what the target did right). In the paper profile it sees each failure as the
generation prompt does, with its expected answer and the scorer's account: the paper's
preparation summarises failures, it does not test the optimizer on them. Only the released
code's verified fixes (`Config.verified_fixes`) show a checkable failure blind: the optimizer
solves it and the task's own scorer decides whether that answer is right.

A diagnosis the scorer contradicts is never shown to the generator as the reason for a failure
(it is named in the event's `withheld`): a blind diagnosis whose own answer the scorer rejected,
and one whose rule asks for the very output the scorer failed. The generation prompt
receives the rest (`prompts/feedback.py`).

Cost: one batched call per generating round, made after the operator is chosen, on exactly the
feedback the generation calls use (s_t's, or the intermediate skill's for I2); I3's K draws
share it. Its own call kind (`feedback_preparation`) in usage; the scorer's checks execute no
target model and are not counted in the budget B. Off with `Config.feedback_preparation`.
"""

from __future__ import annotations

from llm_cache.records import CallKind, Response, TextBlock
from stratune_core.feedback.execution import FailureCase, Feedback, clip
from stratune_core.operators.forms import format_lines
from stratune_core.prompts.budget import KEEP_FAILURES, turn_budget
from stratune_core.prompts.optimizer import ask, optimizer_request
from stratune_core.prompts.prep_prompt import (
    PREPARATION_SYSTEM,
    Diagnosis,
    Preparation,
    PrepCase,
    SuccessNote,
    parse_preparation,
    parse_shared_rule,
    preparation_prompt,
)
from stratune_core.records.base import Sample, is_solved
from stratune_core.records.task import Task, follow_ups_of
from stratune_core.round.verified_fixes import annotate
from stratune_core.state.context import Env
from stratune_core.state.events import Event, FeedbackPrepared
from stratune_core.state.state import State

SOLVE_INPUT_CHARS = 4000  # a longer input is shown clipped, so it cannot be solved blind
OUTPUT_CHARS = 400


def solvable_input(task: Task, sample: Sample, model: str) -> str | None:
    """The sample's whole input as text, when the optimizer can answer it in one text reply that
    the task's scorer can grade: one request per sample, text only, short enough to show."""
    if follow_ups_of(task) is not None:  # later calls depend on replies: not one answer
        return None
    requests = task.requests("", sample, model)
    if len(requests) != 1:
        return None
    request = requests[0]
    if any(not isinstance(b, TextBlock) for m in request.messages for b in m.content):
        return None
    text = request.user_text().strip()
    return text if 0 < len(text) <= SOLVE_INPUT_CHARS else None


def blind_solves(env: Env) -> bool:
    """Whether checkable failures are shown blind (the released code's verified fixes)."""
    return env.config.verified_fixes is not None


def checkable_count(env: Env, fb: Feedback) -> int | None:
    """How many of `fb`'s failures preparation could verify; None when preparation is off."""
    if not env.config.feedback_preparation:
        return None
    if not blind_solves(env):
        return 0
    model = env.config.target_model
    return sum(solvable_input(env.task, env.samples[f.sample_id], model) is not None
               for f in fb.failures)


def _failure_case(env: Env, failure: FailureCase) -> PrepCase:
    sample = env.samples[failure.sample_id]
    blind = solvable_input(env.task, sample, env.config.target_model) if blind_solves(env) else None
    return PrepCase(
        sample_id=failure.sample_id, input=failure.input, output=failure.output,
        blind=blind,
        expected=failure.expected, problem=failure.summary,
    )


def _success_cases(state: State, env: Env, fb: Feedback) -> list[PrepCase]:
    cases = []
    for sample_id in fb.batch_ids:
        execution = state.ledger.get(fb.skill_id, sample_id)
        if execution is None or not execution.solved:
            continue
        if len(cases) >= env.config.successes_prepared:
            break
        sample = env.samples[sample_id]
        cases.append(PrepCase(sample_id=sample_id, input=clip(env.task.describe(sample), 600),
                              output=clip(execution.output, OUTPUT_CHARS), solved=True))
    return cases


def prepare_feedback(
    state: State, env: Env, fb: Feedback
) -> tuple[Preparation | None, tuple[Event, ...]]:
    """One preparation call for the failures (and a few successes) of `fb`, or nothing when
    preparation is off or there is nothing to diagnose."""
    if not env.config.feedback_preparation or not fb.failures:
        return None, ()
    failures = [_failure_case(env, f) for f in fb.failures]
    successes = _success_cases(state, env, fb)
    fitted = preparation_prompt(
        format_lines=format_lines(state.text(fb.skill_id)), failures=failures,
        successes=successes, keep_failures=KEEP_FAILURES,
        budget=turn_budget(env.config.prompt_tokens, PREPARATION_SYSTEM, repairable=False),
        tools=fb.tools,
    )
    request = optimizer_request(env, fitted.text, kind=CallKind.FEEDBACK_PREPARATION,
                                system=PREPARATION_SYSTEM)
    (reply,) = ask(env, [request])
    notes = parse_preparation(reply)
    shown, blind = fitted.shown, fitted.blind
    shared = parse_shared_rule(reply)
    if any(asks_for(shared, c.output) for c in failures if c.sample_id in shown):
        shared = ""  # it asks for an output the scorer failed
    diagnoses, verified, summaries, withheld = [], [], [], []
    answers: dict[str, str] = {}  # the blind answers the scorer accepted
    for case in successes:
        worked = notes.get(case.sample_id, {}).get("worked")
        if worked and case.sample_id in fitted.solved:
            summaries.append(SuccessNote(sample_id=case.sample_id, worked=worked))
    for case in failures:
        if case.sample_id not in shown:
            continue
        got = notes.get(case.sample_id, {})
        answer = got.get("answer", "") if case.sample_id in blind else ""
        ok = bool(answer) and _checks(env, case.sample_id, answer)
        if got.get("wrong") or got.get("rule") or ok:
            diagnosis = Diagnosis(sample_id=case.sample_id, wrong=got.get("wrong", ""),
                                  rule=got.get("rule", ""), verified=ok)
            if contradicted(diagnosis, case, blind=case.sample_id in blind):
                withheld.append(case.sample_id)
            else:
                diagnoses.append(diagnosis)
        if ok:
            verified.append(case.sample_id)
            answers[case.sample_id] = answer
    detail = ""
    if not diagnoses and not summaries and not withheld and not shared:
        said = " ".join(reply.split())[:120]
        detail = f"no usable <sample> block in the reply: {said!r}"
    event = FeedbackPrepared(
        round=state.round, skill_id=fb.skill_id,
        failures=len(shown), checkable=len(blind),
        diagnosed=tuple(d.sample_id for d in diagnoses), verified=tuple(verified),
        successes=tuple(s.sample_id for s in summaries), detail=detail,
        withheld=tuple(withheld), shared=bool(shared),
    )
    if detail:
        return None, (event,)
    fixes, annotated = (), ()
    if env.config.verified_fixes is not None:
        fixes, annotated = annotate(
            round_index=state.round, skill_id=fb.skill_id,
            failure_ids=[c.sample_id for c in failures if c.sample_id in shown],
            attempted=blind, verified=answers, k=env.config.verified_fixes.k)
    prep = Preparation(skill_id=fb.skill_id, diagnoses=diagnoses, successes=summaries,
                       fixes=fixes, blind=blind_solves(env), shared_rule=shared)
    return prep, (event, *annotated)


MIN_QUOTED_OUTPUT = 4  # shorter outputs ("5", "yes") occur in any sentence by chance


def contradicted(diagnosis: Diagnosis, case: PrepCase, *, blind: bool) -> bool:
    """Does the task's scorer contradict the diagnosis? A blind one rests on the optimizer's own
    answer, which the scorer rejected unless it is verified; any one whose rule asks for the
    target's output, which the scorer graded as a failure, points the generator back at it."""
    if blind and not diagnosis.verified:
        return True
    return asks_for(diagnosis.rule, case.output)


def asks_for(rule: str, output: str) -> bool:
    """Does `rule` quote `output` (white space and case aside)?"""
    said = " ".join(output.split()).casefold()
    return len(said) >= MIN_QUOTED_OUTPUT and said in " ".join(rule.split()).casefold()


def _checks(env: Env, sample_id: str, answer: str) -> bool:
    """The task's scorer grades the optimizer's answer as it grades the target's."""
    score = env.task.score(env.samples[sample_id], (Response(text=answer),))
    return is_solved(score.value, env.threshold)
