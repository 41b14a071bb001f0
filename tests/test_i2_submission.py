"""I2's submission rule (paper §3.1, App. A.1): each candidate is submitted as soon as it is
generated and I2 submits the drafts that score higher on the common subset; the one draft of a
step goes on unless the intermediate skill beats it there. The released profile's window keeps
its own rule (`round/i2_window.py`, tests/test_released_i2.py)."""

from __future__ import annotations

from attrs import frozen

import stratune_core.state.events as ev
from llm_cache.records import CallKind, Request, Response, Usage
from stratune_core.config.knobs import Config
from stratune_core.records.enums import Strategy, Verdict
from stratune_core.round.run import run
from stratune_core.round.strategies import submits
from tests.support.toy import InProcessLLM, ToyOptimizer, ToyTask


def test_a_draft_goes_on_unless_the_intermediate_skill_beats_it():
    assert submits(0.5, 0.25) and submits(0.0, 0.0) and submits(0.25, 0.25)
    assert not submits(0.0, 0.1) and not submits(0.49, 0.5)


@frozen
class _NeutralDrafts:
    """The good toy optimizer, except that every candidate adds a sentence the toy target
    ignores: each I2 draft ties the intermediate skill on the ranking subset."""

    def __call__(self, request: Request) -> Response:
        if request.kind is not CallKind.CANDIDATE_GENERATION:
            return ToyOptimizer(style="good")(request)
        n = request.messages[0].text().count("round ")  # differs per step: no duplicate text
        text = (f'<candidate>\n<form>F1</form>\n<theme>care</theme>\n<edit op="append">'
                f"Read the whole input once more before answering ({n}).</edit>\n</candidate>")
        return Response(text=text, usage=Usage(input_tokens=1, output_tokens=1))


def test_a_draft_that_ties_the_intermediate_skill_is_evaluated():
    llm = InProcessLLM(optimizer=_NeutralDrafts())
    result = run(Config(seed=1, max_rounds=3, operator="I2+F1"), ToyTask(), llm)
    ranked = [e for e in result.events if isinstance(e, ev.DraftsRanked)
              and e.strategy is Strategy.I2]
    ties = [e for e in ranked if e.scores[0] == e.reference_score]
    assert ties, "the neutral drafts should tie on the ranking subset"
    decided = {e.candidate_id: e.verdict for e in result.events
               if isinstance(e, ev.CandidateDecided)}
    for e in ties:
        assert e.submitted == e.candidate_ids
        assert decided[e.candidate_ids[0]] is not Verdict.NOT_SUBMITTED
