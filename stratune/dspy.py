"""StraTune as a DSPy optimizer: `from stratune.dspy import StraTune` (docs/python-api.md).

    optimizer = StraTune(metric=exact, target="anthropic:claude-haiku-4-5",
                         optimizer="anthropic:claude-sonnet-4-6", out="runs/qa")
    learned = optimizer.compile(program, trainset=train, valset=dev)

Needs the optional `dspy` package: pip install 'stratune[dspy]'.
"""

from __future__ import annotations

from replay.dspy_program.optimizer import StraTune
from replay.dspy_program.task import ProgramTask

__all__ = ["ProgramTask", "StraTune"]
