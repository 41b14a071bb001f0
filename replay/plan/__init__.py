"""`stratune plan`: what a budget affords, for StraTune and for the baselines."""

__all__ = ["estimate", "method_plan"]
