"""The released screening decisions as tables: every rule consulted for a candidate's call is a
`RuleCheck` naming each condition with its value and limit, the run records one `RuleChecked`
event per rule consulted, and the viewer shows the failed conditions. The released guardrails:
more than `guard_severe_max` regressions among the random part of Q_s reject at once, and the
auxiliary metric sends a candidate to probation (a small drop) or blocks its acceptance (a drop
beyond 2 eps_guard). The paper profile emits no such event."""

from __future__ import annotations

import io

from rich.console import Console

import stratune_core.state.events as ev
from replay.viewer import build_view, candidate_detail
from stratune_core.config.knobs import Config
from stratune_core.config.profiles import paper, released
from stratune_core.evaluation import screen
from stratune_core.evaluation.branch import branch_check
from stratune_core.evaluation.probation import Call, Guards, screening_decision
from stratune_core.evaluation.rules import Rule, Term
from stratune_core.records.enums import Verdict
from stratune_core.round.run import iterate
from tests.support.toy import InProcessLLM, ToyOptimizer, ToyTask

RELEASED = released()


def _screen(base, cand, config: Config = RELEASED):
    return screen(base, cand, config=config, eps0=0.0025, success_threshold=1.0)


def _winner():
    """Seven wins and no loss on 36 samples: passes every screening gate, ready."""
    base = [1.0] * 18 + [0.0] * 18
    return base, [1.0] * 18 + [1.0] * 7 + [0.0] * 11


def test_a_passing_candidate_is_accepted_and_the_table_says_so():
    out = _screen(*_winner())
    call, rules = screening_decision(out, config=RELEASED, branch=None, final=False)
    assert call is Call.PASS and [r.rule for r in rules] == [Rule.COMMIT] and rules[0].holds


def test_two_regressions_among_the_random_part_reject_and_name_guard_severe():
    base, cand = _winner()
    out = _screen(base, cand)
    call, rules = screening_decision(out, config=RELEASED, branch=None, final=False,
                                     guards=Guards(severe=2))
    assert call is Call.REJECT
    assert [r.rule for r in rules] == [Rule.COMMIT, Rule.NOT_WORSE]
    assert all(r.failed == (Term.GUARD_SEVERE,) for r in rules)
    one = screening_decision(out, config=RELEASED, branch=None, final=False,
                             guards=Guards(severe=1))[0]
    assert one is Call.PASS
    assert screening_decision(out, config=paper(), branch=None, final=False,
                              guards=Guards(severe=5))[0] is Call.PASS  # off in the paper


def test_the_auxiliary_metric_sends_a_small_drop_to_probation_and_blocks_a_large_one():
    out = _screen(*_winner())
    eps_guard = min(0.01, out.threshold)
    small = Guards(aux=-1.5 * eps_guard)
    call, rules = screening_decision(out, config=RELEASED, branch=None, final=False, guards=small)
    assert call is Call.PROBATION and rules[0].failed == (Term.AUX_OK,)
    last, _ = screening_decision(out, config=RELEASED, branch=None, final=True, guards=small)
    assert last is Call.SAVE  # on its last set it is decided without acceptance
    large = Guards(aux=-2.5 * eps_guard)
    call, rules = screening_decision(out, config=RELEASED, branch=None, final=False, guards=large)
    assert call is Call.PROBATION and Term.AUX_CATASTROPHIC in rules[0].failed
    assert screening_decision(out, config=RELEASED, branch=None, final=True,
                              guards=large)[0] is Call.SAVE
    none = screening_decision(out, config=RELEASED, branch=None, final=False, guards=Guards())
    assert none[0] is Call.PASS  # a task without an auxiliary metric


def test_the_branch_rule_names_every_failed_condition():
    base = [1.0] * 18 + [0.0] * 18
    cand = [0.0] * 8 + [1.0] * 10 + [1.0] * 9 + [0.0] * 9
    strata = ["P"] * 36  # one stratum: wins and losses are not spread
    out = _screen(base, cand)
    check = branch_check(base, cand, outcome=out, strata=strata, random_part=[False] * 36,
                         config=RELEASED)
    assert not check.holds and set(check.failed) == {Term.WIN_STRATA, Term.LOSS_STRATA}
    by = {c.term: c for c in check.conditions}
    assert (by[Term.WIN_STRATA].value, by[Term.WIN_STRATA].limit) == (1, 2)


def _run(config: Config) -> list[object]:
    llm = InProcessLLM(optimizer=ToyOptimizer(style="wide"))
    return [e for _, evs in iterate(config, ToyTask(n_train=96), llm) for e in evs]


def test_a_released_run_records_why_each_screening_call_was_made():
    events = _run(released().replace(seed=4))
    ruled: dict[str, list[ev.RuleChecked]] = {}
    for e in events:
        if isinstance(e, ev.RuleChecked):
            ruled.setdefault(e.candidate_id, []).append(e)
    decided = [e for e in events if isinstance(e, ev.CandidateDecided)
               and e.verdict in (Verdict.REJECTED_SCREENING, Verdict.SAVED, Verdict.ACCEPTED,
                                 Verdict.REJECTED_VALIDATION)]
    screened = {e.candidate_id for e in events if isinstance(e, ev.StageResult)}
    stopped = {e.candidate_id for e in events if isinstance(e, ev.SmokeFailed | ev.FutilityStopped)}
    explained = [d for d in decided if d.candidate_id in screened - stopped]
    assert explained
    for d in explained:
        rules = ruled[d.candidate_id]
        last = rules[-1]
        if d.verdict is Verdict.REJECTED_SCREENING:
            assert not last.holds and any(not c.passed for c in last.conditions)
        elif d.verdict is Verdict.SAVED:
            assert last.holds and last.rule in (Rule.BRANCH, Rule.SAVE)
        else:
            assert last.rule is Rule.COMMIT and last.holds
    assert {r.rule for rs in ruled.values() for r in rs} >= {Rule.COMMIT, Rule.NOT_WORSE}


def test_the_paper_profile_records_no_rule_event():
    events = _run(paper().replace(seed=4, max_rounds=8))
    assert not any(isinstance(e, ev.RuleChecked) for e in events)


def test_the_viewer_shows_the_failed_conditions_of_a_candidate():
    events = _run(released().replace(seed=0))
    view = build_view(events)
    refused = next(e for e in events if isinstance(e, ev.RuleChecked) and not e.holds)
    candidate = view.candidate(refused.candidate_id)
    assert candidate is not None
    console = Console(record=True, width=200, file=io.StringIO())
    console.print(candidate_detail(view, candidate))
    text = console.export_text()
    failed = [c for c in refused.conditions if not c.passed]
    assert f"fails on {failed[0].term.value}" in text
