"""Bridges to other frameworks' tasks and optimizers: Inspect tasks (`inspect:`), Hugging Face
datasets on disk (`hf:`), and StraTune as an MLflow prompt optimizer (`stratune.mlflow`). Each
framework is imported only by the modules of its own bridge, when a task of its kind loads."""

__all__ = ["hf_dataset", "inspect_engine", "inspect_export", "inspect_load", "inspect_skill",
           "inspect_task", "mlflow_command", "mlflow_optimizer", "mlflow_prompts", "mlflow_task",
           "specs"]
