"""Hostile programs that learn host pids or hold host files without writing: socket owners
naming host pids, /proc/PID, locks on the interpreter and the venv, inotify and fanotify
instances. Run as root by `make test` and as a dropped uid by `test_sandbox_as_user.py`
(programs in sandbox_leak_probes).
"""

from __future__ import annotations

import pytest

from replay.tasks.sandbox import TierName
from tests import sandbox_leak_probes as probes
from tests.sandbox_fixtures import FAST, TIER_PARAMS, tier_or_skip

pytestmark = pytest.mark.parametrize("tier_name", TIER_PARAMS)


def test_socket_owner_ioctls_give_the_same_answer_for_every_pid(tier_name: TierName) -> None:
    """FIOSETOWN and SIOCSPGRP on a socketpair and a pipe answer alike for live and free host
    pids, so they enumerate nothing."""
    outcome = probes.probe_socket_owner(tier_or_skip(tier_name), FAST)
    assert outcome.verdict == "blocked", outcome


def test_host_files_cannot_be_locked(tier_name: TierName) -> None:
    """flock, F_SETLK and F_OFD_SETLK on the interpreter and a venv file leave no lock a host
    locker would meet, while the program goes on as if it held them."""
    outcome = probes.probe_file_locks(tier_or_skip(tier_name), FAST)
    assert outcome.verdict == "blocked", outcome
    assert "CALLED flock" in outcome.result.stdout, outcome


def test_no_inotify_or_fanotify_instance_is_made(tier_name: TierName) -> None:
    """No inotify instance counts against the uid's host-wide limit, none watches a host
    directory, and fanotify_init fails."""
    outcome = probes.probe_notify_instances(tier_or_skip(tier_name), FAST)
    assert outcome.verdict == "blocked", outcome


def test_proc_pid_entries(tier_name: TierName) -> None:
    """Under bubblewrap /proc is the run's own, so host pids are not there; under Landlock the
    host's /proc answers for them, the "cannot" of docs/sandbox.md (this fails once fixed, so
    the table is updated with it)."""
    outcome = probes.probe_proc_pids(tier_or_skip(tier_name), FAST)
    expected = "blocked" if tier_name is TierName.BUBBLEWRAP else "escaped"
    assert outcome.verdict == expected, outcome
