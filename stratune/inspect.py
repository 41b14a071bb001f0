"""Inspect tasks in StraTune, and learned skills back in Inspect (docs/integrations.md).

    stratune.optimize("inspect:evals/capitals.py@capitals", target=..., optimizer=..., out=...)
    task = with_skill(source_task("evals/capitals.py", "capitals"), learned_skill)

`with_skill` puts a skill in an Inspect task's system message(s); `source_task` builds a task
file's `@task`; `export` writes a run's learned skill as a task file for `inspect eval` (what
`stratune export-inspect RUN` does). Needs inspect_ai: pip install 'stratune[inspect]'.
"""

from __future__ import annotations

from replay.bridges.specs import require

require("inspect_ai", "stratune.inspect needs inspect_ai", "inspect")

from replay.bridges.inspect_export import export, source_task  # noqa: E402
from replay.bridges.inspect_skill import skill_message, with_skill  # noqa: E402
from replay.bridges.inspect_task import InspectTask  # noqa: E402

__all__ = ["InspectTask", "export", "skill_message", "source_task", "with_skill"]
