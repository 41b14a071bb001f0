"""Bridges to other frameworks' tasks and optimizers: Inspect tasks (`inspect:`), Hugging Face
datasets on disk (`hf:`), and StraTune as an MLflow prompt optimizer (`stratune.mlflow`). Each
framework is imported only by the modules of its own bridge, when a task of its kind loads."""
