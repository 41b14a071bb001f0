"""The released code's further blocks of the execution feedback E_t, each behind its own
`Config` field (all off in the paper profile, whose prompts stay as they were):

- contrast (`feedback_contrast`): solved samples of the batch the revision must not break, 3
  in a seeded hash order, then (continuous scores only) the 2 with the longest expected
  answers, with a note that a rule shortening answers must leave those intact;
- longitudinal (`feedback_longitudinal`): from the second epoch on, once s_t is not the
  initial skill, how many samples s_t improved, regressed and still fails against s_0 on the
  samples both ran, with up to 6 / 6 / 8 examples;
- trajectories (`feedback_trajectories`): up to 6 solved batch samples of a multi-step task,
  each step marked right or wrong (tasks with `task.StepTrajectories`: Mind2Web);
- gold pairs (`feedback_gold_pairs`): the solved input -> gold lines shown whatever the forms
  (the paper shows them to F2 only);
- answer statistics (`feedback_global_stats`, the released `livemath_opus` variant): answer
  options that recur in at least 12 training samples, with how often each is the correct one
  (tasks with `task.AnswerOptions`: LiveMath).

Everything is read from the ledger and the training data: nothing here executes or spends.
The rendering is in `prompts/extras.py`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from stratune_core.feedback.execution import Extras, Feedback, Longitudinal, clip
from stratune_core.records.base import Execution, Sample, is_solved
from stratune_core.records.task import AnswerOptions, StepTrajectories, Task
from stratune_core.released.events import FeedbackExtended
from stratune_core.round.residuals import order_key
from stratune_core.state.context import Env
from stratune_core.state.state import State

CONTRAST_RANDOM, CONTRAST_LONG = 3, 2
LONGITUDINAL_SHOWN = (6, 6, 8)  # improved, regressed, persistent
TRAJECTORIES_SHOWN = 6
STATS_MIN_SUPPORT, STATS_ROWS = 12, 5


def _solved_in_batch(state: State, fb: Feedback) -> list[Execution]:
    execs = (state.ledger.get(fb.skill_id, sid) for sid in fb.batch_ids)
    return [e for e in execs if e is not None and e.solved]


def contrast(state: State, env: Env, fb: Feedback) -> tuple[list[str], int]:
    """Solved batch samples (ids) and how many of them (the last) have the longest answers."""
    seed, rnd = env.config.seed, state.round
    solved = sorted((e.sample_id for e in _solved_in_batch(state, fb)),
                    key=lambda sid: order_key("contrast", seed, rnd, sid))
    picked = solved[:CONTRAST_RANDOM]
    if env.task.info.binary:  # a binary answer has no length worth protecting
        return picked, 0
    rest = sorted(solved[CONTRAST_RANDOM:], key=lambda sid: (
        -len(env.task.expected(env.samples[sid])), order_key("long", seed, rnd, sid)))
    longest = rest[:CONTRAST_LONG]
    return picked + longest, len(longest)


def contrast_line(task: Task, sample: Sample) -> str:
    return f"[{sample.id}] {clip(task.describe(sample), 200)} -> {clip(task.expected(sample), 160)}"


def initial_id(state: State) -> str:
    return next(sid for sid, parent in state.parents.items() if parent is None)


def longitudinal(state: State, env: Env) -> Longitudinal | None:
    """s_t against s_0 on the samples both ran, from the second epoch on."""
    first = initial_id(state)
    if state.round < len(state.batches) or state.current_id == first:
        return None
    ledger, threshold = state.ledger, env.threshold
    groups: dict[str, list[tuple[str, float, float]]] = {"i": [], "r": [], "p": []}
    common = 0
    for sid in env.train_ids:
        before, now = ledger.get(first, sid), ledger.get(state.current_id, sid)
        if before is None or now is None:
            continue
        common += 1
        was_ok, now_ok = is_solved(before.score, threshold), is_solved(now.score, threshold)
        kind = "i" if now_ok and not was_ok else "r" if was_ok and not now_ok else "" if now_ok else "p"
        if kind:
            groups[kind].append((sid, before.score, now.score))

    def lines(kind: str, shown: int) -> tuple[str, ...]:
        seed = env.config.seed
        rows = sorted(groups[kind], key=lambda r: order_key("long" + kind, seed, 0, r[0]))
        return tuple(f"[{sid}] {clip(env.task.describe(env.samples[sid]), 110)} | "
                     f"{a:.2f} -> {b:.2f}" for sid, a, b in rows[:shown])

    ki, kr, kp = LONGITUDINAL_SHOWN
    return Longitudinal(
        common=common, improved=lines("i", ki), regressed=lines("r", kr),
        persistent=lines("p", kp), counts=(len(groups["i"]), len(groups["r"]), len(groups["p"])),
    )


def trajectories(state: State, env: Env, fb: Feedback) -> list[tuple[str, str]]:
    """(sample id, rendering) of solved batch samples whose task renders its steps."""
    task = env.task
    if not isinstance(task, StepTrajectories):
        return []
    seed, rnd = env.config.seed, state.round
    solved = sorted(_solved_in_batch(state, fb),
                    key=lambda e: order_key("trajectory", seed, rnd, e.sample_id))
    shown: list[tuple[str, str]] = []
    for e in solved:
        text = task.trajectory(env.samples[e.sample_id], e.output)
        if text:
            shown.append((e.sample_id, text))
        if len(shown) >= TRAJECTORIES_SHOWN:
            break
    return shown


def option_stats(task: Task, samples: Sequence[Sample]) -> tuple[str, ...]:
    """Answer options recurring in >= STATS_MIN_SUPPORT training samples, with their rate of
    being correct: base rates only, no sample's own answer."""
    if not isinstance(task, AnswerOptions):
        return ()
    seen: Counter[str] = Counter()
    correct: Counter[str] = Counter()
    with_options = 0
    for sample in samples:
        options = task.answer_options(sample)
        with_options += bool(options)
        for text, is_correct in options:
            key = " ".join(text.lower().split())[:160]
            seen[key] += 1
            correct[key] += is_correct
    common = sorted((k for k, n in seen.items() if n >= STATS_MIN_SUPPORT),
                    key=lambda k: (-seen[k], k))[:STATS_ROWS]
    return tuple(
        f'- an option reading "{clip(k, 130)}" appears in {seen[k]} of {with_options} '
        f"training samples and is the correct answer in {correct[k]} of them "
        f"({correct[k] / seen[k]:.0%})" for k in common
    )


def extend_feedback(
    state: State, env: Env, fb: Feedback
) -> tuple[Feedback, tuple[FeedbackExtended, ...]]:
    """`fb` with the blocks its config turns on, and the event saying what they hold."""
    cfg = env.config
    picked, long_gold = contrast(state, env, fb) if cfg.feedback_contrast else ([], 0)
    timeline = longitudinal(state, env) if cfg.feedback_longitudinal else None
    steps = trajectories(state, env, fb) if cfg.feedback_trajectories else []
    gold = cfg.feedback_gold_pairs and bool(fb.examples)
    stats = option_stats(env.task, env.train) if cfg.feedback_global_stats else ()
    extras = Extras(
        contrast=tuple(contrast_line(env.task, env.samples[sid]) for sid in picked),
        long_gold=long_gold, longitudinal=timeline,
        trajectories=tuple(text for _, text in steps), gold_pairs=gold, stats=stats,
    )
    if not extras:
        return fb, ()
    event = FeedbackExtended(
        round=state.round, skill_id=fb.skill_id, contrast=picked,
        longitudinal=timeline.counts if timeline is not None else (),
        trajectories=tuple(sid for sid, _ in steps),
        gold_pairs=tuple(e.sample_id for e in fb.examples) if gold else (), stats=len(stats),
    )
    return fb.evolve(extras=extras), (event,)
