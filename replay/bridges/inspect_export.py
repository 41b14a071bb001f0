"""`stratune export-inspect RUN`: the skill a run learned on an Inspect task, written back as
an Inspect task file that `inspect eval` runs.

The file loads the run's task from its own file, as the run did, and puts the learned skill
in its system message(s) (`with_skill`): same dataset, scorers and other solvers. It imports
`stratune.inspect`, so StraTune must be installed where it is evaluated.
"""

from __future__ import annotations

from pathlib import Path

from inspect_ai import Task

from replay.bridges import specs
from replay.bridges.inspect_load import definition
from replay.rundir.output_path import check_output
from replay.rundir.trace import RunDir
from stratune_core.records.errors import StraTuneError

HEADER = '"""The skill StraTune learned'
TEMPLATE = '''{header} for {source} (run {run}, final skill {final_id}), as
an Inspect task: inspect eval {output}@{name}
"""

from inspect_ai import Task, task

from stratune.inspect import source_task, with_skill

SKILL = {skill!r}


@task
def {name}() -> Task:
    return with_skill(source_task({file!r}, {task!r}), SKILL)
'''


def source_task(file: str | Path, name: str) -> Task:
    """The `@task` `name` of an Inspect task file, built as `inspect eval FILE@NAME` builds it."""
    return definition(specs.BridgeSpec(prefix=specs.INSPECT, path=str(Path(file).resolve()),
                                       task=name))


def export(run: str | Path, output: str | Path | None = None) -> tuple[Path, str]:
    """Write the run's learned skill as an Inspect task file; the file and its task's name.
    A file of another origin is never overwritten."""
    run_dir = RunDir.at(run)
    manifest = run_dir.read_manifest()
    if specs.kind_of(manifest.task.spec) != specs.INSPECT:
        raise StraTuneError(f"{run_dir.path}: its task is {manifest.task.spec!r}, not an "
                            "Inspect task (inspect:FILE.py@TASK); nothing to export")
    if not manifest.finished or manifest.final_id is None:
        raise StraTuneError(f"{run_dir.path}: the run did not finish; resume it with the same "
                            "command, then export")
    spec = specs.parse(manifest.task.spec)
    assert spec.task is not None
    name = f"{spec.task}_stratune"
    path = check_output(output if output is not None else f"{name}.py")
    if path.exists() and not path.read_text(encoding="utf-8").startswith(HEADER):
        raise StraTuneError(f"--output {path}: exists and was not written by export-inspect; "
                            "give another --output or remove it")
    skill = run_dir.read_blob(manifest.final_id)
    path.write_text(TEMPLATE.format(header=HEADER, source=f"{Path(spec.path).name}@{spec.task}",
                                    run=run_dir.path, final_id=manifest.final_id[:8],
                                    output=path, name=name, skill=skill, file=spec.path,
                                    task=spec.task), encoding="utf-8")
    return path, name
