"""Composite hypothesis strategies for the core's records and rule inputs."""

from __future__ import annotations

from hypothesis import strategies as st

from llm_cache.records import (
    CallKind,
    ImageBlock,
    Message,
    Request,
    Response,
    Role,
    TextBlock,
    Usage,
)
from stratune_core.budget.admission import Admission, Budget
from stratune_core.budget.ledger import Ledger
from stratune_core.config.knobs import Config
from stratune_core.config.profiles import paper, released
from stratune_core.evaluation import Check, paired_stats, screen, validate
from stratune_core.records.base import Execution, Sample, Score, TaskInfo
from stratune_core.records.enums import CheckName, Reason, Stage
from stratune_core.selection.selectors.registry import SELECTORS

unit = st.floats(0.0, 1.0, allow_nan=False)
short_text = st.text(max_size=20)
ident = st.text("abcdefghij0123456789", min_size=1, max_size=6)
STRATA = ("s0", "s1", "s2", "s3")


@st.composite
def score_pairs(draw: st.DrawFn, binary: bool | None = None, max_size: int = 60):
    """(base, cand, success_threshold, delta): aligned score vectors of one evaluation set."""
    is_binary = draw(st.booleans()) if binary is None else binary
    n = draw(st.integers(0, max_size))
    if is_binary:
        vals = st.sampled_from([0.0, 1.0])
        threshold = 1.0
    else:
        # a coarse grid produces ties, exact threshold hits and exact delta-sized changes
        vals = st.one_of(unit, st.integers(0, 20).map(lambda i: i / 20))
        threshold = draw(st.sampled_from([0.5, 0.8, 0.9, 1.0]))
    base = draw(st.lists(vals, min_size=n, max_size=n))
    cand = draw(st.lists(vals, min_size=n, max_size=n))
    delta = draw(st.sampled_from([0.05, 0.10, 0.25]))
    return base, cand, threshold, delta


@st.composite
def sample_lists(draw: st.DrawFn, min_size: int = 0, max_size: int = 80) -> list[Sample]:
    """Samples with unique ids spread over a few strata (some strata may be absent)."""
    n = draw(st.integers(min_size, max_size))
    strata = draw(st.lists(st.sampled_from(STRATA), min_size=n, max_size=n))
    return [Sample(id=f"x{i}", stratum=s) for i, s in enumerate(strata)]


seeds = st.integers(0, 2**32 - 1)

json_leaf = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-1000, 1000),
    st.floats(allow_nan=False, allow_infinity=False),
    short_text,
)
json_like = st.recursive(
    json_leaf,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(short_text, inner, max_size=3)
    ),
    max_leaves=8,
)

samples = st.builds(Sample, id=ident, stratum=st.sampled_from(STRATA), payload=json_like)
scores = st.builds(Score, value=unit, output=short_text, summary=short_text, aux=st.none() | unit)
executions = st.builds(
    Execution,
    skill_id=ident,
    sample_id=ident,
    score=unit,
    solved=st.booleans(),
    output=short_text,
    summary=short_text,
)
task_infos = st.builds(
    TaskInfo,
    name=ident,
    initial_skill=short_text,
    success_threshold=unit,
    binary=st.booleans(),
    eps0=unit,
    max_tokens=st.integers(1, 10_000),
)


SELECTOR_RECORDS = tuple(s for cls in SELECTORS for s in cls.examples())


@st.composite
def configs(draw: st.DrawFn) -> Config:
    """A valid Config: one of the profiles with knobs changed within their ranges."""
    base = draw(st.sampled_from([paper(), released()]))
    budget = draw(st.none() | st.integers(2, 10_000))
    validation_min = draw(st.integers(0, 400))
    operator = draw(st.none() | st.sampled_from(["I1+F1", "I3+F4", "I2+F2"]))
    forms = "all" if operator not in (None, "I3+F4") else draw(st.sampled_from(["all", "F4"]))
    selector = "llm" if operator else str(draw(st.sampled_from(SELECTOR_RECORDS)))
    return base.replace(
        seed=draw(st.integers(0, 2**31)),
        budget=budget,
        eps0=draw(st.none() | st.floats(0, 0.1)),
        eps_v=draw(st.floats(0, 0.1)),
        delta=draw(st.floats(0.01, 0.5)),
        lb_limit=draw(unit),
        screen_solved=draw(st.integers(1, 48)),
        screen_random=draw(st.integers(0, 48)),
        validation_min=validation_min,
        validation_max=draw(st.none() | st.integers(max(1, validation_min), 10_000)),
        final_select_frac=draw(st.floats(0.05, 0.95)),
        reserve=draw(st.none() | st.integers(0, 5000 if budget is None else budget - 1)),
        selector=selector,
        forms=forms,
        operator=operator,
        history=draw(st.booleans()),
        bandit_epsilon=draw(unit),
    )


@st.composite
def outcomes(draw: st.DrawFn):
    """Outcomes produced by the real screening and validation rules on generated scores."""
    base, cand, threshold, delta = draw(score_pairs(max_size=20))
    cfg = draw(st.sampled_from([paper(), released()])).replace(delta=delta)
    rule = draw(st.sampled_from([screen, validate]))
    return rule(base, cand, config=cfg, eps0=draw(st.floats(0, 0.01)), success_threshold=threshold)


checks = st.builds(
    Check,
    name=st.sampled_from(CheckName),
    passed=st.booleans(),
    value=st.floats(-1, 1),
    limit=st.floats(-1, 1),
    reason=st.sampled_from(Reason),
)
stats = score_pairs(max_size=20).map(
    lambda p: paired_stats(p[0], p[1], success_threshold=p[2], delta=p[3])
)


@st.composite
def budgets(draw: st.DrawFn) -> Budget:
    limit = draw(st.integers(0, 1000))
    return Budget(
        limit=limit, spent=draw(st.integers(0, limit)), reserve=draw(st.integers(0, limit))
    )


pairs = st.tuples(ident, ident)
admissions = st.builds(
    Admission,
    pairs=st.lists(pairs, max_size=5).map(tuple),
    cost=st.integers(0, 5),
    admitted=st.booleans(),
)


@st.composite
def ledgers(draw: st.DrawFn) -> Ledger:
    execs = draw(st.lists(executions, max_size=10, unique_by=lambda e: (e.skill_id, e.sample_id)))
    return Ledger.of(execs)


blocks = st.one_of(
    st.builds(TextBlock, text=short_text),
    st.builds(ImageBlock, media_type=st.sampled_from(["image/png", "image/jpeg"]), data=ident),
)
messages = st.builds(
    Message,
    role=st.sampled_from(["user", "assistant"]),
    content=st.lists(blocks, min_size=1, max_size=3).map(tuple),
)
requests = st.builds(
    Request,
    role=st.sampled_from(Role),
    model=ident,
    system=short_text,
    messages=st.lists(messages, max_size=3).map(tuple),
    max_tokens=st.integers(1, 10_000),
    temperature=st.none() | unit,
    stop=st.lists(short_text, max_size=2).map(tuple),
    draw=st.integers(0, 5),
    kind=st.sampled_from(CallKind),
)
usages = st.builds(
    Usage,
    **{
        f: st.integers(0, 10**6)
        for f in ("input_tokens", "output_tokens", "cache_write_tokens", "cache_read_tokens")
    },
)
responses = st.builds(Response, text=short_text, stop_reason=short_text, usage=usages, model=ident)
stages = st.sampled_from(Stage)
