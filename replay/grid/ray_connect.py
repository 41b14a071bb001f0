"""Joining the Ray cluster of `grid --ray ADDRESS`, or refusing with one line of ours.

Left to itself, `ray.init` at an address where nothing listens retries for minutes, and at a
cluster that requires Ray's authentication token it prints a warning a second for twenty
seconds, both from Ray's C++ client straight to the process's stderr, around whatever line we
print after. So the address is resolved and its port probed first (a few seconds at most), and
Ray's own output during `ray.init` goes to a scratch file that is read only to say why it
failed.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import sys
import tempfile
from collections.abc import Iterator
from typing import IO, Any

from stratune_core.records.errors import ConfigError

PROBE_S = 5.0  # a cluster's GCS port answers a TCP connect at once; a dead host never does
AUTH_SIGNS = ("Unauthenticated", "InvalidAuthToken", "AuthenticationError")
TOKEN_HELP = ("set RAY_AUTH_TOKEN to the cluster's token (or RAY_AUTH_TOKEN_PATH to its file; "
              "`ray get-auth-token` on the head node prints it)")


def join(ray: Any, address: str | None) -> None:
    """`ray.init(address)`, quiet; ConfigError (one line) when no cluster can be joined."""
    flag = f"--ray {address}"
    if address not in (None, "local"):
        _probe(flag, _host_port(flag, address))
    with _quiet_stderr() as scratch:
        try:
            ray.init(address=address, log_to_driver=False, logging_level=logging.ERROR)
        except Exception as exc:  # Ray raises ConnectionError, RuntimeError, its own types
            scratch.seek(0)
            said = scratch.read().decode("utf-8", "replace")
            raise ConfigError(_why(flag, f"{exc}\n{said}")) from None


def _why(flag: str, said: str) -> str:
    if any(sign in said for sign in AUTH_SIGNS):
        return f"{flag}: the cluster requires Ray's authentication token, which this shell " \
               f"lacks: {TOKEN_HELP}"
    first = next((line.strip() for line in said.splitlines() if line.strip()), "no reason given")
    return f"{flag}: Ray could not join the cluster ({first[:200]}); check the address, " \
           "or start one with `ray start --head`"


def _host_port(flag: str, address: str) -> tuple[str, int]:
    text = address.removeprefix("ray://")
    if address == "auto":
        from ray._private import services

        try:
            found = services.get_ray_address_from_environment("auto", None)
        except ConnectionError:
            found = None
        if not found:
            raise ConfigError(f"{flag}: no Ray cluster runs on this machine (no `ray start`, "
                              "and RAY_ADDRESS is unset); start one with `ray start --head`, or "
                              "give its address")
        text = found.removeprefix("ray://")
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or not 0 < int(port) < 65536:
        raise ConfigError(f"{flag}: not HOST:PORT (give `auto`, HOST:PORT or ray://HOST:PORT)")
    return host.strip("[]") or "127.0.0.1", int(port)


def _probe(flag: str, where: tuple[str, int]) -> None:
    host, port = where
    try:
        with socket.create_connection(where, timeout=PROBE_S):
            return
    except OSError as exc:
        reason = "nothing listens there" if isinstance(exc, ConnectionRefusedError) else (
            f"no answer within {PROBE_S:.0f} s" if isinstance(exc, TimeoutError)
            else exc.strerror or type(exc).__name__)
    raise ConfigError(f"{flag}: no Ray cluster answers at {host}:{port} ({reason}); start one "
                      "with `ray start --head`, or give the head node's address")


@contextlib.contextmanager
def _quiet_stderr() -> Iterator[IO[bytes]]:
    """File descriptor 2 points at a scratch file meanwhile: Ray's C++ client writes there, not
    through sys.stderr."""
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as scratch:
        os.dup2(scratch.fileno(), 2)
        try:
            yield scratch
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
