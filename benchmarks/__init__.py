"""On-demand benchmarks (`make bench`): figures against targets, never part of CI's pass/fail."""
