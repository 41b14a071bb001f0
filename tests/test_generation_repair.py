"""Candidate generation's repair call: a reply with no usable candidate block (none at all, or
only blocks that cannot be read as a patch) is answered once more, told what was wrong; a
readable block is preferred to a malformed one beside it."""

from __future__ import annotations

from attrs import frozen

import stratune_core.state.events as ev
from llm_cache.records import CallKind, Request, Response, Usage
from stratune_core.config.knobs import Config
from stratune_core.operators.patches import parse_candidates
from stratune_core.round.generation import pick
from stratune_core.round.run import run
from tests.support.toy import InProcessLLM, ToyOptimizer, ToyTask

MALFORMED = ('<candidate>\n<form>F1</form>\n<theme>t</theme>\n<edit op="replace">\n'
             "<new>Reply with the transformed word.</new>\n</edit>\n</candidate>")
SOUND = ('<candidate>\n<form>F1</form>\n<theme>t</theme>\n<edit op="append">\n'
         "When a word is marked [U], write it in upper case.\n</edit>\n</candidate>")


@frozen
class _FirstMalformed:
    """Writes a replace edit without its <old> part; answers a repair with a sound append."""

    def __call__(self, request: Request) -> Response:
        if request.kind is not CallKind.CANDIDATE_GENERATION:
            return ToyOptimizer(style="good")(request)
        text = SOUND if len(request.messages) > 1 else MALFORMED
        return Response(text=text, usage=Usage(input_tokens=1, output_tokens=1))


def test_a_reply_of_malformed_blocks_is_repaired_with_its_error_named():
    llm = InProcessLLM(optimizer=_FirstMalformed())
    result = run(Config(seed=1, max_rounds=1), ToyTask(), llm)
    calls = [r for r in llm.calls if r.kind is CallKind.CANDIDATE_GENERATION]
    assert len(calls) == 2
    repair = calls[1].messages[-1].text()
    assert "could not be used: edit 1 (replace): missing <old>...</old>. Reply again" in repair
    assert any(isinstance(e, ev.CandidateGenerated) for e in result.events)
    assert not any(isinstance(e, ev.CandidateInvalid) for e in result.events)


def test_a_readable_block_is_taken_before_a_malformed_one():
    raws = parse_candidates(MALFORMED + "\n" + SOUND)
    assert [r.patch is None for r in raws] == [True, False]
    assert pick(raws, 1) == (raws[1],)
    assert pick(raws, 2) == (raws[1], raws[0])
    assert pick((), 1) == ()


def test_plain_text_in_a_replace_or_insert_after_edit_is_read_as_added_text():
    """With no part naming where the text goes, adding it is the one local edit that fits."""
    for op in ("replace", "insert_after"):
        (raw,) = parse_candidates(f'<candidate><form>F1</form><edit op="{op}">\nAnswer with the '
                                  "value only.\n</edit></candidate>")
        assert raw.patch is not None
        (edit,) = raw.patch.edits
        assert (edit.op.value, edit.new) == ("append", "Answer with the value only.")
    # a body with parts keeps its errors: the reader does not guess past a tag
    (raw,) = parse_candidates('<candidate><form>F1</form><edit op="replace"><new>x</new>'
                              "</edit></candidate>")
    assert raw.patch is None and "missing <old>" in raw.error
