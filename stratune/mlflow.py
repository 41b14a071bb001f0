"""StraTune as an MLflow prompt optimizer: `from stratune.mlflow import StraTuneOptimizer`
(docs/integrations.md).

    result = mlflow.genai.optimize_prompts(
        predict_fn=predict_fn, train_data=data, prompt_uris=[prompt.uri], scorers=[exact],
        optimizer=StraTuneOptimizer(optimizer="anthropic:claude-sonnet-4-6", out="runs/qa"))

Needs MLflow 3.18 or later (`pip install 'stratune[mlflow]'`).
"""

from __future__ import annotations

from replay.bridges.specs import require

require("mlflow.genai.optimize.optimizers.base",
        "stratune.mlflow needs MLflow's prompt optimization (mlflow >= 3.18)", "mlflow")

from replay.bridges.mlflow_command import check_prompts, optimize_prompts  # noqa: E402
from replay.bridges.mlflow_optimizer import TARGET, StraTuneOptimizer  # noqa: E402
from replay.bridges.mlflow_task import PromptData, PromptTask  # noqa: E402

__all__ = ["TARGET", "PromptData", "PromptTask", "StraTuneOptimizer", "check_prompts",
           "optimize_prompts"]
