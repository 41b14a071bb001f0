"""Feedback preparation (paper App. D.4, Table 8), whose blind solves also make the released
code's "verified fixes" (`feedback/verified_fixes.py`).

Before candidates are written, the optimizer diagnoses each shown failure (what the target did
wrong, what a correct answer needs) and summarises a few successful trajectories (what the
target did right). Where the task can check it, the failure is shown blind, the optimizer
solves it, and the task's own scorer decides whether that answer is right: only then is the
diagnosis marked verified. The generation prompt receives the notes (`prompts/feedback.py`).

Cost: one batched call per generating round, made after the operator is chosen, on exactly the
feedback the generation calls use (s_t's, or the intermediate skill's for I2); I3's K draws
share it. Its own call kind (`feedback_preparation`) in usage; the scorer's checks execute no
target model and are not counted in the budget B. Off with `Config.feedback_preparation`.
"""

from __future__ import annotations

from llm_cache.records import CallKind, Response, TextBlock
from stratune_core.feedback.execution import FailureCase, Feedback, clip
from stratune_core.feedback.prep_prompt import (
    PREPARATION_SYSTEM,
    Diagnosis,
    Preparation,
    PrepCase,
    SuccessNote,
    parse_preparation,
    preparation_prompt,
)
from stratune_core.feedback.verified_fixes import annotate
from stratune_core.operators.forms import format_lines
from stratune_core.operators.optimizer import ask, optimizer_request
from stratune_core.prompts.budget import KEEP_FAILURES, turn_budget
from stratune_core.records.base import Sample, is_solved
from stratune_core.records.events import Event, FeedbackPrepared
from stratune_core.records.state import State
from stratune_core.records.task import Task
from stratune_core.round.context import Env

SOLVE_INPUT_CHARS = 4000  # a longer input is shown clipped, so it cannot be solved blind
OUTPUT_CHARS = 400


def solvable_input(task: Task, sample: Sample, model: str) -> str | None:
    """The sample's whole input as text, when the optimizer can answer it in one text reply that
    the task's scorer can grade: one request per sample, text only, short enough to show."""
    requests = task.requests("", sample, model)
    if len(requests) != 1:
        return None
    request = requests[0]
    if any(not isinstance(b, TextBlock) for m in request.messages for b in m.content):
        return None
    text = request.user_text().strip()
    return text if 0 < len(text) <= SOLVE_INPUT_CHARS else None


def checkable_count(env: Env, fb: Feedback) -> int | None:
    """How many of `fb`'s failures preparation could verify; None when preparation is off."""
    if not env.config.feedback_preparation:
        return None
    model = env.config.target_model
    return sum(solvable_input(env.task, env.samples[f.sample_id], model) is not None
               for f in fb.failures)


def _failure_case(env: Env, failure: FailureCase) -> PrepCase:
    sample = env.samples[failure.sample_id]
    return PrepCase(
        sample_id=failure.sample_id, input=failure.input, output=failure.output,
        blind=solvable_input(env.task, sample, env.config.target_model),
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
    )
    request = optimizer_request(env, fitted.text, kind=CallKind.FEEDBACK_PREPARATION,
                                system=PREPARATION_SYSTEM)
    (reply,) = ask(env, [request])
    notes = parse_preparation(reply)
    shown, blind = fitted.shown, fitted.blind
    diagnoses, verified, summaries = [], [], []
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
        if got.get("wrong") or got.get("needs") or ok:
            diagnoses.append(Diagnosis(sample_id=case.sample_id, wrong=got.get("wrong", ""),
                                       needs=got.get("needs", ""), verified=ok))
        if ok:
            verified.append(case.sample_id)
            answers[case.sample_id] = answer
    detail = ""
    if not diagnoses and not summaries:
        said = " ".join(reply.split())[:120]
        detail = f"no usable <sample> block in the reply: {said!r}"
    event = FeedbackPrepared(
        round=state.round, skill_id=fb.skill_id,
        failures=len(shown), checkable=len(blind),
        diagnosed=tuple(d.sample_id for d in diagnoses), verified=tuple(verified),
        successes=tuple(s.sample_id for s in summaries), detail=detail,
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
                       fixes=fixes)
    return prep, (event, *annotated)


def _checks(env: Env, sample_id: str, answer: str) -> bool:
    """The task's scorer grades the optimizer's answer as it grades the target's."""
    score = env.task.score(env.samples[sample_id], (Response(text=answer),))
    return is_solved(score.value, env.threshold)
