"""`stratune demo` on a trace recorded in tmp_path from the toy world, with sockets blocked."""

from __future__ import annotations

import io
import socket
import time
from pathlib import Path

import pytest
from rich.console import Console

from replay.commands.demo import demo, find_trace
from replay.models import specs as models
from stratune_core.records.errors import StraTuneError
from tests.support.cli import record_in_process, toy_extensions


class SocketUsed(AssertionError):
    pass


@pytest.fixture(autouse=True)
def toy_world():
    """Replaying a toy trace needs the toy task, which the tests inject."""
    with models.using(toy_extensions()):
        yield


@pytest.fixture
def no_sockets(monkeypatch):
    """Any network use fails the test, whatever the demo itself does about it."""

    def refuse(*_args, **_kwargs):
        raise SocketUsed("the demo touched the network")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)


def _console() -> tuple[Console, io.StringIO]:
    buffer = io.StringIO()
    return Console(file=buffer, width=100), buffer


def test_demo_replays_offline_and_shows_the_summary(tmp_path, no_sockets):
    trace = record_in_process(tmp_path / "traces" / "demo")
    cache_files = sorted(p.name for p in (trace / "cache").iterdir())
    console, buffer = _console()
    started = time.perf_counter()
    code = demo(console, find_trace(tmp_path / "traces"))
    elapsed = time.perf_counter() - started
    text = buffer.getvalue()
    assert code == 0, text
    assert "replay OK" in text and "digest" in text
    assert "StraTune run" in text and "operators:" in text and "rounds" in text
    # the trace is left as it was: the replay opens the cache read-only
    assert sorted(p.name for p in (trace / "cache").iterdir()) == cache_files
    print(f"demo on the toy trace: {elapsed:.2f} s")


def test_demo_blocks_the_network_itself():
    from replay.commands.demo import NetworkBlocked, sockets_blocked

    original = socket.create_connection
    with sockets_blocked(), pytest.raises(NetworkBlocked, match="offline"):
        socket.create_connection(("example.com", 80))
    assert socket.create_connection is original  # restored afterwards


def test_demo_fails_clearly_when_the_cache_lacks_a_call(tmp_path, no_sockets):
    trace = record_in_process(tmp_path / "run")
    from llm_cache.store import CacheStore

    store = CacheStore(trace / "cache")
    victim = next(iter(store.keys()))
    store.delete(victim)
    store.close()
    console, buffer = _console()
    code = demo(console, trace)
    text = " ".join(buffer.getvalue().split())
    assert code == 1
    assert "replay FAILED" in text and "not in" in text


def test_no_trace_is_a_clear_error(tmp_path):
    with pytest.raises(StraTuneError, match="no recorded trace; record one with"):
        find_trace(tmp_path)


def test_the_bundled_trace_replays_offline_without_local_models(no_sockets, monkeypatch):
    """The trace `make demo` uses, as committed: every call is in its cache, the recomputed
    events match the recorded digest, and nothing in the trace directory changes."""
    import replay.commands.demo as demo_module

    trace = find_trace(demo_module.TRACES)
    assert trace.name == "demo"
    # Replay must never need the backend that recorded the run.
    monkeypatch.setitem(__import__("sys").modules, "llama_cpp", None)
    files = sorted((p.relative_to(trace), p.stat().st_size) for p in trace.rglob("*"))
    console, buffer = _console()
    assert demo(console) == 0, buffer.getvalue()
    assert "replay OK" in buffer.getvalue()
    assert sorted((p.relative_to(trace), p.stat().st_size) for p in trace.rglob("*")) == files


COMMITTED = sorted(p for p in (Path(__file__).resolve().parents[1] / "traces").iterdir()
                   if p.is_dir())


@pytest.mark.parametrize("trace", COMMITTED, ids=lambda p: p.name)
def test_every_committed_trace_replays_offline(trace, no_sockets, monkeypatch):
    """Each directory under traces/ (training runs and evaluation directories) is recomputed
    from its own cache, without the models that recorded it and without the network."""
    from replay.commands.app import main

    monkeypatch.setitem(__import__("sys").modules, "llama_cpp", None)
    files = sorted((p.relative_to(trace), p.stat().st_size) for p in trace.rglob("*"))
    console, buffer = _console()
    monkeypatch.setattr("replay.commands.app.Console", lambda **_kw: console)
    assert main(["replay", str(trace)]) == 0, buffer.getvalue()
    assert "replay OK" in buffer.getvalue()
    assert sorted((p.relative_to(trace), p.stat().st_size) for p in trace.rglob("*")) == files
