"""Hypothesis profiles: `dev` locally, `ci` (more examples, derandomized) when CI is set."""

from __future__ import annotations

import os

from hypothesis import settings

# deadline=None in both: a shared machine's timing noise must never fail a property
settings.register_profile("dev", max_examples=100, deadline=None)
settings.register_profile("ci", max_examples=200, deadline=None, derandomize=True, print_blob=True)
settings.load_profile("ci" if os.environ.get("CI") else "dev")
