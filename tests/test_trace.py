"""Trace files: serde round trip of every event type, digest stability, the run directory's
crash and resume rules, manifest and config errors."""

from __future__ import annotations

import gzip
import json

import pytest
import xxhash

import stratune_core.state.events as ev
from replay.rundir.serde import (
    Manifest,
    TaskSpec,
    TraceError,
    digest_of,
    event_from_line,
    event_to_line,
    manifest_from_json,
    manifest_to_json,
)
from replay.rundir.trace import RunDir
from replay.rundir.writer import TraceWriter
from stratune_core.config.knobs import Config
from stratune_core.config.layers import Layer, layer_config
from stratune_core.evaluation import Check, Outcome, PairedStats, RegressionCounts
from stratune_core.evaluation.rules import Condition
from stratune_core.methods.gepa_events import GepaIteration
from stratune_core.methods.iter_cot_events import ExemplarsChosen, RevisionRound, SummaryChecked
from stratune_core.methods.skillopt_events import EditsSelected, EpochReviewed
from stratune_core.methods.trace2skill_events import ConsolidationDone, LessonsExtracted
from stratune_core.records.enums import (
    Form,
    Reason,
    SkipReason,
    Stage,
    StopReason,
    Strategy,
    Verdict,
)
from stratune_core.records.errors import ConfigError
from stratune_core.records.ids import text_id
from stratune_core.round.registry import TRACE_EVENT_TYPES

BASE = "Answer with the word.\nReturn the final answer inside <answer>...</answer> tags."
CAND = BASE + "\nWhen the word is marked [U], answer in UPPERCASE."
DRAFT = BASE + "\nAlways answer in UPPERCASE."
B, C, D = text_id(BASE), text_id(CAND), text_id(DRAFT)


def _outcome(stage: Stage, gain: float, wins: int, losses: int, d: int, u: int, s: int,
             threshold: float) -> Outcome:
    """Built by hand (not through the gates) so the viewer's golden output depends only on the
    record layout."""
    checks = (
        Check(name="gain", passed=gain >= threshold, value=gain, limit=threshold,
              reason=Reason.GAIN_BELOW_THRESHOLD),
        Check(name="wins_vs_losses", passed=wins >= losses, value=float(wins - losses),
              limit=0.0, reason=Reason.MORE_LOSSES_THAN_WINS),
        Check(name="lb_d_s", passed=d <= 1, value=0.05 * d, limit=0.5,
              reason=Reason.REGRESSIONS_AMONG_SOLVED),
    )
    failed = tuple(c.reason for c in checks if not c.passed)
    counts = RegressionCounts(S=s, D=d, U=u, solved_base=frozenset(range(s)),
                              lost=frozenset(range(d)), gained=frozenset(range(s, s + u)))
    stats = PairedStats(n=12, gain=gain, wins=wins, losses=losses, m_tilde=1.0, counts=counts)
    return Outcome(stage=stage, passed=not failed, stats=stats, threshold=threshold,
                   checks=checks, failed=failed)


def _outcomes():
    screening = _outcome(Stage.SCREENING, 0.25, 4, 1, 1, 4, 6, 0.0833)
    validation = _outcome(Stage.VALIDATION, 0.2, 3, 0, 0, 3, 6, 0.01)
    bad = _outcome(Stage.SCREENING, -0.5, 0, 6, 6, 0, 6, 0.0833)
    return screening, validation, bad


def sample_events() -> tuple:
    """One or more events of every type, in the order a run would emit them."""
    screening, validation, bad = _outcomes()
    ids = tuple(f"s{i:03d}" for i in range(12))
    return (
        ev.RunStarted(task="toy", n_train=48, budget=288, reserve=72, initial_skill_id=B,
                      n_batches=16),
        ev.SkillAdded(skill_id=B, text=BASE, parent_id=None),
        ev.RoundStarted(round=0, epoch=0, batch_index=0, current_id=B, spent=0),
        ev.ExecutionsCharged(round=0, purpose="feedback", skill_ids=(B,), new=3, reused=0,
                             spent=3),
        ev.BatchExecuted(round=0, skill_id=B, sample_ids=ids[:3], solved=1, mean_score=1 / 3),
        ev.OperatorChosen(round=0, strategy=Strategy.I3, form=Form.F1,
                          why="failures share one marker; sample broadly", source="llm"),
        ev.FeedbackPrepared(round=0, skill_id=B, failures=2, checkable=2, diagnosed=ids[1:3],
                            verified=ids[1:2], successes=ids[:1]),
        ev.SkillAdded(skill_id=C, text=CAND, parent_id=B),
        ev.CandidateGenerated(round=0, candidate_id=C, parent_id=B, strategy=Strategy.I3,
                              form=Form.F1, theme="uppercase rule", draw=0),
        ev.SkillAdded(skill_id=D, text=DRAFT, parent_id=B),
        ev.CandidateGenerated(round=0, candidate_id=D, parent_id=B, strategy=Strategy.I3,
                              form=Form.F1, theme="always upper", draw=1, sources=("s001",)),
        ev.CandidateInvalid(round=0, strategy=Strategy.I3, form=Form.F2,
                            reason=Reason.UNGROUNDED_EXAMPLE, detail="s999 is not a sample",
                            draw=2),
        ev.DraftsRanked(round=0, strategy=Strategy.I3, reference_id=B, reference_score=0.5,
                        candidate_ids=(C, D), scores=(0.75, 0.25), submitted=(C, D)),
        ev.ExecutionsCharged(round=0, purpose="screening", skill_ids=(B, C), new=12, reused=3,
                             spent=15),
        ev.StageResult(round=0, candidate_id=C, reference_id=B, outcome=screening,
                       sample_ids=ids),
        ev.StageResult(round=0, candidate_id=D, reference_id=B, outcome=bad, sample_ids=ids),
        ev.CandidateDecided(round=0, candidate_id=D, verdict=Verdict.REJECTED_SCREENING,
                            reasons=bad.failed),
        ev.StageResult(round=0, candidate_id=C, reference_id=B, outcome=validation,
                       sample_ids=ids),
        ev.CandidateDecided(round=0, candidate_id=C, verdict=Verdict.ACCEPTED),
        ev.SkillReplaced(round=0, previous_id=B, current_id=C),
        ev.RefinementKept(round=0, accepted_id=C, intermediate_id=B, steps=1),
        ev.RoundStarted(round=1, epoch=0, batch_index=1, current_id=C, spent=40),
        ev.WarmupRound(round=1, skill_id=C, solved_known=7, needed=18, done=False),
        ev.ResidualsPooled(round=1, skill_id=C, batch_failures=2, sample_ids=ids[3:6]),
        ev.FeedbackExtended(round=1, skill_id=C, contrast=ids[:3], longitudinal=(2, 1, 4),
                            trajectories=ids[:1], gold_pairs=ids[:2], stats=3),
        ev.StrategiesNarrowed(round=1, offered=(Strategy.I1, Strategy.I2),
                              dropped=(Strategy.I3,), remaining=40),
        ev.FixesAnnotated(round=1, skill_id=C, verified=ids[3:4], unverified=ids[4:5]),
        ev.WindowSubmitted(round=1, candidate_ids=(D,), scores=(0.5,), reference_scores=(0.25,),
                           submitted=(D,)),
        ev.OperatorChosen(round=1, strategy=Strategy.I2, form=Form.F2, why="", source="llm",
                          fallback=True, detail="reply was not JSON"),
        ev.RoundSkipped(round=1, reason="F2 has no material this round"),
        ev.RefinementAdvanced(round=1, intermediate_id=C, steps=1, advanced=False),
        ev.CandidateUnaffordable(round=1, candidate_id=D, stage=Stage.VALIDATION, cost=30,
                                 remaining=4),
        ev.CandidatePruned(round=1, candidate_id=D),
        ev.ExecutionsCharged(round=2, purpose="final_selection", skill_ids=(B, C), new=2,
                             reused=20, spent=50, pairs=((B, ids[0]), (C, ids[0]))),
        ev.FinalComparison(candidate_id=D, selected_id=C, selection=bad, confirmation=bad,
                           replaced=False, selection_ids=ids[:3], confirmation_ids=ids[3:5]),
        # the released profile's evaluation events
        ev.SmokeFailed(round=2, candidate_id=D, sample_ids=ids[:8], broken=7, kept=0),
        ev.SmokePassed(round=2, candidate_id=C, sample_ids=ids[:8], broken=2, kept=1),
        ev.FutilityStopped(round=2, candidate_id=D, stage=Stage.VALIDATION, sample_ids=ids[:6],
                           gain=-0.25, wins=1, losses=3),
        ev.ProbationOpened(round=2, candidate_id=D, changes=4, sample_ids=ids[6:]),
        ev.CandidateBranched(round=2, candidate_id=D, wins=5, losses=4, win_strata=2,
                             loss_strata=3),
        ev.RuleChecked(round=2, candidate_id=D, rule="commit", holds=False, conditions=(
            Condition(term="gates", passed=True, value=0, limit=0),
            Condition(term="guard_severe", passed=False, value=2, limit=1))),
        ev.RankingSmokeFailed(round=2, candidate_id=D, sample_ids=ids[:4], score=0.0,
                              reference_score=0.5),
        ev.ScreeningDeferred(round=2, candidate_id=D, solved=3, random=18, solved_quota=6,
                             random_quota=18, retry=False),
        ev.EarlyStopWaived(round=32, epoch=2, i2_round=20),
        ev.SeatRefused(candidate_id=B, rule="common", common=12),
        ev.SalvageAttempted(round=2, donor_id=D, rescues=ids[:3], candidate_id=None),
        # the baselines' events
        ev.MethodStarted(method="textgrad", settings='{"minibatch":3}'),
        ev.SplitMade(fit_ids=ids[2:], validation_ids=ids[:2]),
        ev.TargetExecuted(round=0, purpose="rollout", skill_id=B, sample_ids=ids[:3], reused=1,
                          spent=3),
        ev.ExecutionsRefused(round=3, purpose="validation", needed=10, remaining=4),
        ev.SkillScored(round=0, skill_id=C, purpose="validation", n=2, mean=0.5, solved=1),
        ev.UpdateDecided(round=0, parent_id=B, candidate_id=C, verdict="reverted", score=0.25,
                         reference_score=0.5),
        RevisionRound(iteration=1, revised=ids[:3], corrected=ids[:1]),
        SummaryChecked(sample_id="s001", kept=True),
        ExemplarsChosen(pool=5, sample_ids=ids[:2]),
        LessonsExtracted(sample_id="s002", solved=False, lessons=2),
        ConsolidationDone(seed=41, candidate_id=C, groups=3),
        ev.FinalChosen(skill_ids=(B, C), scores=(0.25, 0.5), final_id=C),
        EditsSelected(round=1, proposed=9, merged=4, limit=3, applied=2),
        EpochReviewed(epoch=1, previous_id=B, current_id=C, improved=3, regressed=1,
                         persistent_fail=6, stable_success=10, guidance=True),
        GepaIteration(round=1, parent_id=B, minibatch_ids=ids[:3], parent_scores=(0.0, 1.0, 0.0),
                         candidate_id=C, candidate_scores=(1.0, 1.0, 0.0), accepted=True,
                         validation=0.5, front=(B, C)),
        GepaIteration(round=2, parent_id=C, minibatch_ids=ids[3:6], parent_scores=(1.0, 1.0, 1.0),
                         detail="every minibatch sample already solved"),
        ev.GeneratorProposed(round=1, generator="gepa", sample_ids=ids[:3], candidate_id=C),
        ev.RunFinished(final_id=C, reason=StopReason.BUDGET, rounds=2, spent=50, budget=288),
    )


def test_sample_events_cover_every_event_type():
    assert {type(e) for e in sample_events()} == set(TRACE_EVENT_TYPES)


@pytest.mark.parametrize("event", sample_events(), ids=lambda e: type(e).__name__)
def test_every_event_type_round_trips(event):
    texts = {B: BASE, C: CAND, D: DRAFT}
    line = event_to_line(event)
    assert "\n" not in line
    back = event_from_line(line, texts.__getitem__)
    assert back == event
    assert event_to_line(back) == line  # canonical: a second pass gives the same bytes


def test_skill_texts_are_not_in_event_lines():
    line = event_to_line(ev.SkillAdded(skill_id=C, text=CAND, parent_id=B))
    assert "UPPERCASE" not in line and json.loads(line)["text_blob"] == C


def test_line_format_and_digest_are_pinned():
    """A change of the line format changes every recorded digest: it must be deliberate."""
    events = sample_events()
    assert event_to_line(events[0]) == (
        '{"_type":"RunStarted","budget":288,"initial_skill_id":"' + B + '","n_batches":16,'
        '"n_train":48,"reserve":72,"task":"toy"}'
    )
    lines = [event_to_line(e) for e in events[:3]]
    assert digest_of(lines) == digest_of(list(lines)) == PINNED_DIGEST
    # the definition: xxh3_128 over the lines, each followed by a newline
    assert xxhash.xxh3_128_hexdigest("".join(x + "\n" for x in lines).encode()) == PINNED_DIGEST


PINNED_DIGEST = "d0d125340f58e24ea46bedb90a6da0cc"


def test_digest_depends_on_order_and_content():
    lines = [event_to_line(e) for e in sample_events()]
    assert digest_of(lines) != digest_of(lines[1:] + lines[:1])
    changed = lines[:]
    changed[4] = changed[4].replace('"solved":1', '"solved":2')
    assert changed != lines and digest_of(changed) != digest_of(lines)


def _write(run_dir: RunDir, events) -> TraceWriter:
    writer = TraceWriter(run_dir)
    writer.write(events)
    return writer


def test_writer_stores_texts_once_and_reads_back(tmp_path):
    run_dir = RunDir.at(tmp_path)
    events = sample_events()
    writer = _write(run_dir, events)
    writer.finish()
    assert sorted(p.name for p in run_dir.blobs.iterdir()) == sorted(f"{i}.txt.gz" for i in (B, C, D))
    lines, back = run_dir.read_events()
    assert back == events and writer.digest.hexdigest() == digest_of(lines)


def test_torn_last_line_is_dropped_and_a_rerun_verifies_the_prefix(tmp_path):
    run_dir = RunDir.at(tmp_path)
    events = sample_events()
    _write(run_dir, events[:10]).close()
    with open(run_dir.events, "ab") as fh:  # a crash in the middle of a line
        fh.write(b'{"_type":"RoundSta')
    assert len(run_dir.read_lines()) == 10
    writer = TraceWriter(run_dir)
    writer.write(events[:6])
    assert writer.report.describe() == "resumed: 6 of 10 recorded events reproduced so far"
    writer.write(events[6:])
    writer.finish()
    assert writer.report.describe() == "resumed: all 10 recorded events reproduced identically"
    assert run_dir.read_events()[1] == events


def test_a_rerun_that_diverges_rewrites_from_the_first_difference(tmp_path):
    run_dir = RunDir.at(tmp_path)
    events = list(sample_events())
    _write(run_dir, events).close()
    other = events[:5] + [ev.RoundSkipped(round=0, reason=SkipReason.NO_EXAMPLES)]
    writer = TraceWriter(run_dir)
    writer.write(other)
    writer.finish()
    assert writer.report.diverged_at == 6
    assert list(run_dir.read_events()[1]) == other


def test_an_edited_blob_is_reported(tmp_path):
    run_dir = RunDir.at(tmp_path)
    _write(run_dir, sample_events()).close()
    run_dir.blob(C).write_bytes(gzip.compress(b"something else", mtime=0))
    with pytest.raises(TraceError, match=f"{C}.txt.gz: content does not hash to its name"):
        run_dir.read_events()


def _manifest() -> Manifest:
    return Manifest(task=TaskSpec(spec="demo"), target="anthropic:claude-haiku-4-5",
                    optimizer="anthropic:claude-sonnet-4-5", seed=1, config=Config(seed=1))


def test_manifest_round_trips():
    m = _manifest()
    assert manifest_from_json(manifest_to_json(m)) == m


def test_manifest_errors_are_one_line_and_name_the_field():
    data = json.loads(manifest_to_json(_manifest()))
    data["config"]["sed"] = 3
    data["seed"] = "one"
    with pytest.raises(TraceError) as info:
        manifest_from_json(json.dumps(data), where="run/manifest.json")
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith("run/manifest.json: ")
    assert "expected int @ $.seed" in message and "unknown field(s) 'sed'" in message


def test_config_file_values_are_checked():
    def from_file(values, *earlier):
        return layer_config("paper", [*earlier, Layer(where="c.json", values=values)]).config

    with pytest.raises(ConfigError, match=r"c.json: budget: must be > 0, got -1"):
        from_file({"budget": -1})
    with pytest.raises(ConfigError, match=r"c.json: unknown field\(s\) 'budgt'"):
        from_file({"budgt": 5})
    assert from_file({"budget": 90}, Layer(where="x", values={"seed": 2})) == Config(
        seed=2, budget=90)


def test_a_manifest_is_never_written_with_a_value_json_cannot_hold(tmp_path, monkeypatch):
    """NaN or Infinity would make manifest.json unreadable as JSON: refused, nothing written."""
    import replay.rundir.trace
    from replay.rundir.serde import Manifest, TaskSpec
    from stratune_core.records.errors import StraTuneError

    manifest = Manifest(task=TaskSpec(spec="demo"), target="t", optimizer="o", seed=0,
                        config=Config())
    run_dir = RunDir.at(tmp_path)
    run_dir.write_manifest(manifest)
    before = run_dir.manifest.read_bytes()
    monkeypatch.setattr(replay.rundir.trace, "manifest_to_json", lambda m: '{"z": NaN}')
    with pytest.raises(StraTuneError, match="NaN"):
        run_dir.write_manifest(manifest)
    assert run_dir.manifest.read_bytes() == before
