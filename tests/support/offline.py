"""A pytest fixture for tests that must not leave this machine: every connection and every
name look-up of a host other than this one is refused and recorded, and the test fails at its
end if there was any (even one a library caught and went on without).

    from tests.support.offline import offline  # noqa: F401 (a fixture)
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from typing import Any

import pytest

LOCAL = ("127.0.0.1", "::1", "localhost")


@pytest.fixture
def offline(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    refused: list[str] = []
    connect, lookup = socket.socket.connect, socket.getaddrinfo

    def guarded_connect(sock: socket.socket, address: Any) -> Any:
        if isinstance(address, tuple) and address[0] not in LOCAL:
            refused.append(str(address))
            raise OSError(f"test: no network ({address})")
        return connect(sock, address)

    def guarded_lookup(host: Any, *args: Any, **kwargs: Any) -> Any:
        if host not in (*LOCAL, None):
            refused.append(str(host))
            raise socket.gaierror(f"test: no network ({host})")
        return lookup(host, *args, **kwargs)

    monkeypatch.setattr(socket.socket, "connect", guarded_connect)
    monkeypatch.setattr(socket, "getaddrinfo", guarded_lookup)
    yield refused
    assert refused == [], f"the test reached for the network: {refused}"
