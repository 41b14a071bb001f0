"""Residual pooling (released code; `Config.residual_pooling`): a batch on which s_t fails
fewer than `residual_min_failures` samples borrows s_t's known failures on other training
samples, so the optimizer still sees enough failures to generalise from (and a round whose
batch s_t solves entirely still has something to work on).

The released code re-executes those samples, billed unless its cache answers. Here they are
read from the execution ledger: every failure is known because s_t ran that sample in this run,
and a (skill, sample) pair runs at most once, so pooling costs nothing and spends no budget,
what the released code pays whenever its cache holds the call (it does for an unchanged skill).
No run id or clock salts the order (the released code's does): continuous scores nearest to
solved come first, then a hash of the run seed, the round and the sample id.
"""

from __future__ import annotations

import xxhash

from stratune_core.feedback.execution import Feedback, failure_case, offered_examples
from stratune_core.released.events import ResidualsPooled
from stratune_core.state.context import Env
from stratune_core.state.state import State


def order_key(tag: str, seed: int, round_index: int, sample_id: str) -> int:
    """A deterministic, run-specific order for samples (no clock, no run id)."""
    return xxhash.xxh3_64_intdigest(f"{tag}|{seed}|{round_index}|{sample_id}".encode())


def pool_residuals(
    state: State, env: Env, fb: Feedback
) -> tuple[Feedback, tuple[ResidualsPooled, ...]]:
    """`fb` with known failures of its skill outside the batch appended after the batch's own
    (as many as `max_failures_shown` leaves room for), or `fb` unchanged."""
    cfg = env.config
    batch_failures = len(fb.batch_ids) - fb.n_solved
    pooling = cfg.residual_pooling
    if pooling is None or batch_failures >= pooling.min_failures:
        return fb, ()
    room = min(pooling.width, cfg.max_failures_shown - len(fb.failures))
    in_batch = set(fb.batch_ids)
    known = [
        e for sid in env.train_ids
        if sid not in in_batch and (e := state.ledger.get(fb.skill_id, sid)) is not None
        and not e.solved
    ]
    if room <= 0 or not known:
        return fb, ()
    seed, rnd = cfg.seed, state.round
    binary = env.task.info.binary
    known.sort(key=lambda e: (0.0 if binary else -e.score,
                              order_key("resid", seed, rnd, e.sample_id)))
    pooled = known[:room]
    cases = tuple(failure_case(env.task, env.samples[e.sample_id], e) for e in pooled)
    ids = tuple(e.sample_id for e in pooled)
    failures = (*fb.failures, *cases)
    # the offered examples follow the failures now shown, pooled ones included
    examples = offered_examples(
        task=env.task, skill_id=fb.skill_id, batch_ids=fb.batch_ids,
        failure_ids=[f.sample_id for f in failures], ledger=state.ledger, samples=env.samples,
        max_examples=cfg.max_solved_offered, train_order=env.train_ids,
    )
    fb = fb.evolve(failures=failures, pooled=ids, examples=examples)
    return fb, (ResidualsPooled(round=state.round, skill_id=fb.skill_id,
                                batch_failures=batch_failures, sample_ids=ids),)
