"""StraTune as a DSPy optimizer (`stratune.dspy`): a program's predictors' instructions are the
parts of one skill, and one target execution is one run of the whole program on one example.
Needs the optional `dspy` package: importing this package without it raises one line saying
what to install."""

try:
    import dspy  # noqa: F401
except ImportError:
    raise ImportError("stratune.dspy needs DSPy, which is not installed: "
                      "pip install 'stratune[dspy]'") from None

__all__ = ["engine", "optimizer", "task", "tools"]
