"""`stratune view RUN --episode SAMPLE`: one execution read back from the run's own cache
(strict replay: nothing is sent, no tool runs) and rendered as the task renders it for the
optimizer: an agent episode's trajectory (each call with its arguments and result, and the
answer), or a single call's reply, with the score and the scorer's account."""

from __future__ import annotations

from pathlib import Path

from rich.console import Group, RenderableType
from rich.panel import Panel
from rich.text import Text

from llm_cache.client import CachedLLM
from llm_cache.modes import Mode
from llm_cache.reader import CacheReader
from llm_cache.store import CacheNotFound
from replay.rundir.serde import Manifest
from stratune_core.records.errors import StraTuneError
from stratune_core.tasks.executions import run_jobs


def episode(path: str | Path, manifest: Manifest, skill_text: str, skill_id: str,
            sample_id: str) -> RenderableType:
    from replay.models import specs as models

    task = models.load_task(manifest.task, toolbox=manifest.toolbox)
    samples = {s.id: s for split in ("train", "test") for s in task.split(split)}
    sample = samples.get(sample_id)
    if sample is None:
        some = ", ".join(list(samples)[:3])
        raise StraTuneError(f"--episode {sample_id}: no such sample in the task (e.g. {some})")
    try:
        reader = CacheReader(Path(path) / "cache")
    except CacheNotFound:
        raise StraTuneError(f"--episode: {path} carries no cache to read the episode from") from None
    with CachedLLM(reader, backends={}, mode=Mode.REPLAY) as llm:
        try:
            (calls,) = run_jobs(task, llm, manifest.config.target_model, [(skill_text, sample)])
        except StraTuneError as exc:
            raise StraTuneError(f"--episode {sample_id}: skill {skill_id[:8]} never ran on it "
                                f"in this run ({' '.join(str(exc).split())[:160]})") from None
    score = task.score(sample, calls.responses)
    head = Text.assemble((f"sample {sample_id}", "bold"), f" · skill {skill_id[:8]} · score "
                         f"{score.value:.2f} · {len(calls.requests)} calls")
    body = [Text(f"input: {task.describe(sample)}"), Text(f"expected: {task.expected(sample)}"),
            Panel(Text(score.output or "(empty)"), title="trajectory" if manifest.toolbox
                  else "reply", title_align="left")]
    if score.summary:
        body.append(Text(f"problem: {score.summary}", style="yellow"))
    return Group(head, *body)
