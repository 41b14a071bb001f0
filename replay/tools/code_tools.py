"""The sandboxed code tools: `python` runs a program the model writes, `bash` a shell command
(bubblewrap tier only: the Landlock tier confines a Python process, not a shell's children),
each in the SpreadsheetBench sandbox with its limits (a fresh work directory, no network, no
credentials, CPU, memory, process and file limits, the wall time of the call). What the program
printed (stdout, then stderr) is the result; a non-zero exit, a limit or the time limit makes
it an error result.

Neither is pure: their results are recorded and replayed, never rerun on replay.
"""

from __future__ import annotations

import json
from typing import Any

import attrs
import xxhash

from llm_cache.records import ToolSpec
from replay.tasks.sandbox import DEFAULT_LIMITS, Tier, TierName, run_python
from replay.tools.declared import DeclaredTool, canonical
from replay.tools.execution import ToolOutcome, clipped

CODE_TOOLS = ("python", "bash")
_BASH = ("import subprocess, sys\n"
         "done = subprocess.run(['bash', '-c', {command}], capture_output=True, text=True)\n"
         "sys.stdout.write(done.stdout); sys.stderr.write(done.stderr)\n"
         "sys.exit(done.returncode)\n")
_SCHEMAS = {
    "python": ({"code": {"type": "string", "description": "a complete Python 3 program"}},
               "Run a Python 3 program in a sandbox (no network, a fresh empty directory) and "
               "return what it prints."),
    "bash": ({"command": {"type": "string", "description": "one bash command line"}},
             "Run a bash command in a sandbox (no network, a fresh empty directory) and return "
             "what it prints."),
}


def _outcome(result: Any, seconds: float) -> ToolOutcome:
    printed = result.stdout + (f"\n[stderr]\n{result.stderr}" if result.stderr.strip() else "")
    if result.timed_out:
        return ToolOutcome(text=f"error: stopped after {seconds:g} s\n{printed}".rstrip(),
                           error=True)
    if result.limit:
        return ToolOutcome(text=f"error: stopped by the sandbox's {result.limit} limit\n"
                                f"{printed}".rstrip(), error=True)
    outcome = clipped(printed.strip() or "(no output)")
    if result.exit_code != 0:
        return ToolOutcome(text=f"error: exit code {result.exit_code}\n{outcome.text}",
                           error=True)
    return outcome


def code_tool(name: str, tier: Tier, seconds: float) -> DeclaredTool:
    """`python` or `bash` on `tier`, stopped after `seconds`."""
    if name == "bash" and tier.name is not TierName.BUBBLEWRAP:
        from stratune_core.records.errors import ConfigError

        raise ConfigError(f"--tools bash: needs the bubblewrap sandbox tier (this machine runs "
                          f"{tier.name.value}); use python")
    properties, description = _SCHEMAS[name]
    field = next(iter(properties))
    schema = {"type": "object", "properties": properties, "required": [field],
              "additionalProperties": False}
    limits = attrs.evolve(DEFAULT_LIMITS, wall_seconds=seconds,
                          cpu_seconds=max(1, int(seconds)))

    def call(arguments: dict[str, Any]) -> ToolOutcome:
        text = arguments.get(field)
        if not isinstance(text, str) or set(arguments) != {field}:
            return ToolOutcome(text=f"error: invalid arguments for {name}: give exactly "
                                    f"{{\"{field}\": string}}", error=True)
        code = text if name == "python" else _BASH.format(command=json.dumps(text))
        return _outcome(run_python(code, tier=tier, limits=limits), seconds)

    spec = ToolSpec(name=name, description=description, schema=canonical(schema))
    fingerprint = xxhash.xxh3_64_hexdigest(f"sandbox {name} {spec.schema}".encode())
    return DeclaredTool(spec=spec, call=call, pure=False, fingerprint=fingerprint,
                        isolated=True)
