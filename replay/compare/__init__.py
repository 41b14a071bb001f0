"""`stratune compare`: the paper's tables from run directories."""

__all__ = ["ablations", "bandits", "budget", "cli", "fixed_operators", "group", "hybrids",
           "main_results", "methods", "model", "names", "render", "run_summary", "runs",
           "sequences", "tables", "tokens"]
