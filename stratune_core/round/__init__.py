"""The parts run on the state: one round (`step`), the driver loop (`run`), target executions,
operator choice, feedback preparation, the strategies, candidate evaluation, the released
mechanisms, final selection, and `registry.iterate_method`, the entry point for every method.
"""
