"""`--mlflow`: logging runs and grid cells to MLflow, off the run's path."""

__all__ = ["mlflow_runs", "queue"]
