"""Credentials for cells on Ray, against a real local Ray started without the API key: the grid
stops before any cell starts with one line saying where to set it; `--ray-pass-env` hands the
shell's key to the cells through Ray's runtime_env (and never into the grid directory), and the
cells then reach the model server with it."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest
from rich.console import Console

from benchmarks.common import ToyResponder
from llm_cache.testing.fake_server import FakeAnthropicServer
from replay.grid.grid_file import load_grid
from replay.grid.ray_credentials import needs_of, passed_env
from replay.grid.run import GridOptions, run_grid
from replay.models.specs import resolve
from stratune_core.records.errors import ConfigError

ray = pytest.importorskip("ray")
pytestmark = pytest.mark.slow

WORDS = Path(__file__).resolve().parents[1] / "examples" / "grid" / "words"
KEY = "sk-ant-test-only-in-memory-0042"


@pytest.fixture(scope="module")
def ray_without_key():
    saved = {n: os.environ.pop(n) for n in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN",
                                           "ANTHROPIC_BASE_URL") if n in os.environ}
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()
    os.environ.update(saved)


def _grid(tmp_path: Path) -> Path:
    path = tmp_path / "grid.toml"
    path.write_text(f"""seeds = [0]
budget = "2x"

[tasks.words]
task = "{WORDS}"
scorer = "regex"

[pairs.haiku-sonnet]
target = "anthropic:claude-haiku-4-5"
optimizer = "anthropic:claude-sonnet-4-6"

[ablations]
full = {{}}
""", encoding="utf-8")
    return path


def _key(headers) -> str | None:
    """The key a request carried (the SDK sends it as a bearer token or as x-api-key)."""
    low = {k.lower(): v for k, v in headers.items()}
    return low.get("x-api-key") or low.get("authorization", "").removeprefix("Bearer ") or None


def _run(tmp_path: Path, **options):
    return run_grid(load_grid(_grid(tmp_path)), tmp_path / "out",
                    Console(file=io.StringIO(), width=120), options=GridOptions(ray="auto",
                                                                                **options))


def test_cells_without_the_key_are_refused_before_any_starts(ray_without_key, tmp_path,
                                                             monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)  # in this shell only, not in Ray's
    with FakeAnthropicServer(responder=ToyResponder()) as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
        with pytest.raises(ConfigError) as err:
            _run(tmp_path)
        assert fake.requests == ()
    message = str(err.value)
    assert "\n" not in message and "ANTHROPIC_API_KEY" in message
    assert "ray start" in message and "--ray-pass-env" in message
    assert not list((tmp_path / "out").rglob("manifest.json"))  # no cell started


def test_ray_pass_env_hands_the_key_to_the_cells_and_writes_it_nowhere(ray_without_key,
                                                                      tmp_path, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    with FakeAnthropicServer(responder=ToyResponder()) as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
        result = _run(tmp_path, ray_pass_env=True)
        seen = [_key(r.headers) for r in fake.requests]
    assert result.code == 0, [s.message for s in result.statuses]
    assert seen and set(seen) == {KEY}
    for path in (tmp_path / "out").rglob("*"):
        if path.is_file():
            assert KEY.encode() not in path.read_bytes(), path


def test_pass_env_needs_the_key_in_this_shell():
    needs = needs_of(resolve(spec) for spec in ["anthropic:claude-haiku-4-5", "openai:m@http://h:1/v1",
                                                "anthropic:claude-sonnet-4-6?api_key=sk-in-spec"])
    assert list(needs) == ["anthropic:claude-haiku-4-5", "openai:m@http://h:1/v1"]
    assert passed_env(needs, {"ANTHROPIC_API_KEY": "k", "OPENAI_API_KEY": "o", "HOME": "/r"}) \
        == {"ANTHROPIC_API_KEY": "k", "OPENAI_API_KEY": "o"}
    with pytest.raises(ConfigError, match="ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN .* not set "
                                          "in this shell"):
        passed_env(needs, {"OPENAI_API_KEY": "o"})
