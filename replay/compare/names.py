"""The output formats and table names `stratune compare` takes: what its flags offer, apart
from the modules that build and render the tables (the parser imports only this)."""

FORMATS = ("rich", "markdown", "csv", "latex", "json")
NAMES = ("main", "methods", "hybrids", "ablations", "fixed_operators", "bandits", "tokens", "cost_by_kind",
         "sequences", "budget", "runs")
