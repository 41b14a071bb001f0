"""The released profile on a small task (48 training samples): Q_s keeps its quota (18 random
samples, and min(18, max(6, known solved // 3)) solved ones) and validation takes what the batch
and Q_s leave, as in the released code, so a candidate can be screened on a real set and
accepted (before, validation's 100 samples left Q_s one sample). The task's s_0 solves a third
of the samples: with none solved, the released code's solved part is never ready."""

from __future__ import annotations

import stratune_core.state.events as ev
from stratune_core.config.profiles import released
from stratune_core.records.enums import Stage
from stratune_core.round.run import iterate
from tests.support.toy import InProcessLLM, ToyOptimizer, ToyTask

SMALL = ToyTask(n_train=48, markers=("U", "R", "P"))


def _events(seed: int) -> list[object]:
    llm = InProcessLLM(optimizer=ToyOptimizer(style="good"))
    return [e for _, events in iterate(released().replace(seed=seed), SMALL, llm)
            for e in events]


def test_a_released_run_on_48_samples_screens_on_the_quota_and_accepts():
    events = _events(seed=1)
    stages = [e for e in events if isinstance(e, ev.StageResult)]
    stopped = {e.candidate_id for e in events if isinstance(e, ev.FutilityStopped | ev.SmokeFailed)}
    opened = {e.candidate_id for e in events if isinstance(e, ev.ProbationOpened)}
    first = {}
    for e in stages:
        if e.outcome.stage is Stage.SCREENING:
            first.setdefault(e.candidate_id, e)
    full = [e for cid, e in first.items() if cid not in stopped]
    assert full
    # 18 random samples (at least 70 % of them once samples wear out) and at least 5 solved
    # ones, never the 1 sample of a Q_s shrunk to leave 100 for validation
    assert all(18 <= len(e.sample_ids) <= 36 for e in full), [len(e.sample_ids) for e in full]
    assert any(cid not in opened for cid in first)
    validated = [e for e in stages if e.outcome.stage is Stage.VALIDATION]
    assert validated and all(0 < len(e.sample_ids) <= 48 - 3 - 18 for e in validated)
    # few solved samples known: the solved quota is max(6, known // 3) = 6, plus 18 random
    assert any(len(e.sample_ids) == 6 + 18 for e in full)
    accepted = [e for e in events if isinstance(e, ev.SkillReplaced)]
    assert accepted
    assert {e.current_id for e in accepted} <= {e.candidate_id for e in validated}
