"""No credential reaches any file: a run (with its test evaluation), a grid and an evaluation
directory made against fake servers with an API key in the environment, a password in the
OpenAI-compatible base URL and a password in the proxy settings leave none of them in any
byte of any file they write (cache.db included), nor in what the commands print."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from benchmarks.common import ToyResponder
from llm_cache.testing.fake_server import FakeAnthropicServer
from tests.support.openai_server import JsonServer

ROOT = Path(__file__).resolve().parents[1]
API_KEY = "sk-ant-KEYSECRET-5566778899"
URL_PASSWORD = "URLSECRET-0011223344"
PROXY_PASSWORD = "PROXYSECRET-6677889900"
OPENAI_KEY = "sk-OAISECRET-4433221100"
SECRETS = (API_KEY, URL_PASSWORD, PROXY_PASSWORD, OPENAI_KEY)
BASIC = base64.b64encode(f"stratune:{URL_PASSWORD}".encode()).decode()  # the URL's, as sent
TARGET = "claude-haiku-4-5"  # the toy responder's target model, served here by the OpenAI server


class ToyChatServer(JsonServer):
    """The toy target as an OpenAI-compatible server (chat completions only)."""

    def __init__(self) -> None:
        self.responder = ToyResponder(target_model=TARGET)
        self.authorized: list[str] = []
        super().__init__()

    def post(self, path: str, body: dict[str, Any], headers: dict[str, str]) -> tuple[int, dict]:
        if not path.endswith("/chat/completions"):
            return 404, {"error": {"message": "not found"}}
        self.authorized.append(headers.get("authorization", ""))
        messages = body["messages"]
        system = messages[0]["content"] if messages and messages[0]["role"] == "system" else ""
        rest = [m for m in messages if m["role"] != "system"]
        text = self.responder({"model": body["model"], "system": system, "messages": rest,
                               "max_tokens": body.get("max_tokens", 1)})
        return 200, {"model": body["model"], "choices": [
            {"message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5}}


def _hits(directory: Path) -> list[str]:
    needles = [n for s in SECRETS for n in (s.encode(), s.encode("utf-16-le"),
                                             s.split("-", 1)[1].encode())]
    needles.append(BASIC.encode())
    found = []
    for path in sorted(p for p in directory.rglob("*") if p.is_file()):
        data = path.read_bytes()
        found += [f"{path.relative_to(directory)}: {n!r}" for n in needles if n in data]
    return found


@pytest.fixture
def servers():
    chat = ToyChatServer()
    with FakeAnthropicServer(responder=ToyResponder(target_model=TARGET)) as fake:
        host = chat.url.removeprefix("http://")
        target = f"openai:{TARGET}@http://stratune:{URL_PASSWORD}@{host}"
        env = {**os.environ, "ANTHROPIC_API_KEY": API_KEY, "ANTHROPIC_BASE_URL": fake.url,
               "OPENAI_API_KEY": OPENAI_KEY,
               # set, but bypassed for the local servers: its password must still go nowhere
               "HTTP_PROXY": f"http://proxyuser:{PROXY_PASSWORD}@127.0.0.1:9",
               "HTTPS_PROXY": f"http://proxyuser:{PROXY_PASSWORD}@127.0.0.1:9",
               "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost"}
        yield target, env, chat, fake
    chat.close()


def _stratune(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tests.support.cli", *args], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=300)


def test_no_secret_in_any_file_of_a_run_a_grid_or_an_evaluation(servers, tmp_path):
    target, env, chat, fake = servers
    optimizer = "anthropic:claude-sonnet-4-6"
    run = tmp_path / "run"
    said = [_stratune(env, "train", "--task", "toy", "--limit", "12", "--target", target,
                      "--optimizer", optimizer, "--out", str(run), "--test-eval")]
    assert said[-1].returncode == 0, said[-1].stdout[-2000:] + said[-1].stderr[-2000:]
    grid_file = tmp_path / "g.toml"
    grid_file.write_text(textwrap.dedent(f"""\
        seeds = [0]
        test_eval = true
        [tasks.toy]
        task = "toy"
        limit = 12
        [pairs.p]
        target = "{target}"
        optimizer = "{optimizer}"
        [ablations]
        full = {{}}
        """), encoding="utf-8")
    grid = tmp_path / "grid"
    said.append(_stratune(env, "grid", str(grid_file), "--out", str(grid)))
    assert said[-1].returncode == 0, said[-1].stdout[-2000:] + said[-1].stderr[-2000:]
    evaluation = tmp_path / "evaluation"
    said.append(_stratune(env, "evaluate", "--task", "toy", "--limit", "12", "--target", target,
                          "--skill", str(run / "final_skill.txt"), "--baseline", "initial",
                          "--out", str(evaluation)))
    assert said[-1].returncode == 0, said[-1].stdout[-2000:] + said[-1].stderr[-2000:]
    for directory in (run, grid, evaluation):
        said.append(_stratune(env, "replay", str(directory if directory != grid else
                                                 next(grid.rglob("manifest.json")).parent)))
        assert said[-1].returncode == 0, said[-1].stdout[-2000:]
    said.append(_stratune(env, "view", str(run)))
    # the secrets were really in use: the URL's password and the key reached the servers
    assert chat.authorized and all(a == f"Basic {BASIC}" for a in chat.authorized)
    assert fake.requests and all(API_KEY in " ".join(r.headers.values()) for r in fake.requests)
    for directory in (run, grid, evaluation):
        assert (directory / "cache" / "cache.db").is_file() or directory == grid
        assert _hits(directory) == []
    assert any((p / "cache.db").is_file() for p in grid.rglob("cache"))
    # the store still says which server answered, without the password
    manifest = json.loads((run / "manifest.json").read_text())
    assert "127.0.0.1" in manifest["target"]
    for done in said:
        for secret in SECRETS:
            assert secret not in done.stdout + done.stderr


@pytest.mark.parametrize("backend", [
    f"openai:m@http://u:{URL_PASSWORD}@127.0.0.1:8000/v1",
    f"anthropic:claude-haiku-4-5?api_key={API_KEY}",
    f"someprovider:x@https://user:{URL_PASSWORD}@gateway.example/v1?token={API_KEY}&timeout=3",
])
def test_the_cache_and_the_batch_journal_store_no_credential_whatever_the_provider(
        backend, tmp_path):
    """The mechanism: the store and the journal strip credentials from any backend name."""
    from llm_cache.batch_journal import BatchJournal
    from llm_cache.records import Response, Usage
    from llm_cache.store import StoredEntry, decode_entry, encode_entry

    entry = StoredEntry(canonical="{}", backend=backend, response=Response(
        text="x", stop_reason="end_turn", model="m", usage=Usage(input_tokens=1,
                                                                 output_tokens=1)))
    stored = encode_entry(entry)
    assert URL_PASSWORD not in stored and API_KEY not in stored
    assert decode_entry("k", stored).backend.split(":")[0] == backend.split(":")[0]
    journal = BatchJournal(tmp_path / "batches.jsonl")
    journal.submitted("msgbatch_1", backend, ["k1"])
    data = (tmp_path / "batches.jsonl").read_text()
    assert URL_PASSWORD not in data and API_KEY not in data
    assert [b.batch_id for b in journal.open_batches(backend)] == ["msgbatch_1"]
