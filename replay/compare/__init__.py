"""`stratune compare`: the paper's tables from run directories."""
