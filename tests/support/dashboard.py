"""Run directories for the dashboard's tests: a finished run whose texts are all markup meant to
run (`hostile_run`), and the events of a trace read as plain JSON, apart from the converter the
dashboard reads them with (the oracle the page's numbers are compared with)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import stratune_core.state.events as ev
from replay.rundir.serde import Manifest, TaskSpec
from replay.rundir.trace import RunDir
from replay.rundir.writer import TraceWriter
from stratune_core.config.knobs import Config
from stratune_core.records.enums import Form, Reason, StopReason, Strategy, Verdict
from stratune_core.records.ids import text_id

SCRIPT = "<script>window.__pwned = 1</script>"
IMAGE = '<img src="x" onerror="window.__pwned = 2">'
INITIAL = f"Answer briefly.\n{SCRIPT}\n{IMAGE}"
CANDIDATE = f"Answer briefly.\n{SCRIPT}\nNever add words.</pre></script><b onclick=x>bold</b>"


def hostile_run(path: Path) -> Path:
    """A finished run whose skill texts, selector reason, candidate theme, feedback detail and
    task name are markup that would run if a page pasted it in as HTML."""
    base, cand = text_id(INITIAL), text_id(CANDIDATE)
    events = [
        ev.RunStarted(task=SCRIPT, n_train=3, budget=18, reserve=3, initial_skill_id=base,
                      n_batches=1),
        ev.SkillAdded(skill_id=base, text=INITIAL),
        ev.RoundStarted(round=0, epoch=0, batch_index=0, current_id=base, spent=0),
        ev.ExecutionsCharged(round=0, purpose="feedback", skill_ids=(base,), new=3, reused=0,
                             spent=3),
        ev.BatchExecuted(round=0, skill_id=base, sample_ids=("s0", "s1", "s2"), solved=1,
                         mean_score=1 / 3),
        ev.OperatorChosen(round=0, strategy=Strategy.I1, form=Form.F1, why=IMAGE,
                          source="llm"),
        ev.FeedbackPrepared(round=0, skill_id=base, failures=2, checkable=0,
                            diagnosed=("s1", "s2"), detail=SCRIPT),
        ev.SkillAdded(skill_id=cand, text=CANDIDATE, parent_id=base),
        ev.CandidateGenerated(round=0, candidate_id=cand, parent_id=base, strategy=Strategy.I1,
                              form=Form.F1, theme=SCRIPT),
        ev.CandidateInvalid(round=0, strategy=Strategy.I1, form=Form.F2,
                            reason=Reason.UNGROUNDED_EXAMPLE, detail=IMAGE),
        ev.CandidateDecided(round=0, candidate_id=cand, verdict=Verdict.REJECTED_SCREENING),
        ev.RunFinished(final_id=base, reason=StopReason.MAX_ROUNDS, rounds=1, spent=3,
                       budget=18),
    ]
    run_dir = RunDir.at(path)
    writer = TraceWriter(run_dir)
    writer.write(events)
    writer.finish()
    run_dir.write_manifest(Manifest(task=TaskSpec(spec=SCRIPT), target="scripted:toy-target",
                                    optimizer="scripted:toy-optimizer", seed=0, config=Config(),
                                    events=len(events), event_digest=writer.digest.hexdigest(),
                                    finished=True, final_id=base))
    return path


def raw_events(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (path / "events.jsonl").read_text().splitlines()]
