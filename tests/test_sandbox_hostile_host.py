"""Hostile programs against every sandbox tier that reach for state the host shares: other
processes of the program's uid (limits, priorities, CPUs, scheduling, I/O priority, page
placement, and their pids), POSIX IPC objects, and memory RLIMIT_AS does not count; and an
honest program that uses the same calls on itself. Run as root by `make test` and as a
dropped uid by `test_sandbox_as_user.py` (programs in sandbox_host_probes).
"""

from __future__ import annotations

import pytest

from replay.tasks.sandbox import TierName, run_python
from tests import sandbox_host_probes as probes
from tests.sandbox_fixtures import FAST, TIER_PARAMS, tier_or_skip

pytestmark = pytest.mark.parametrize("tier_name", TIER_PARAMS)

MEMORY = probes.MEMORY


def test_processes_outside_the_run_are_out_of_reach(tier_name: TierName) -> None:
    """prlimit, setpriority (process, group, user), sched_setaffinity/setscheduler/setparam/
    setattr, ioprio_set and migrate_pages on sleepers of the program's uid, on the caller and
    on the supervisor change nothing; their reading forms and a scan of every pid with
    sched_getscheduler find none of them; the program's own process stays adjustable."""
    outcome = probes.probe_host_processes(tier_or_skip(tier_name), FAST)
    assert outcome.verdict == "blocked", outcome
    assert "\nOWN 19 " in outcome.result.stdout, outcome.result.stdout
    # bubblewrap's PID namespace hides host pids; the Landlock supervisor answers ESRCH for them
    assert "LEAK" not in outcome.result.stdout, outcome.result.stdout


def test_posix_ipc_objects_stay_in_the_run(tier_name: TierName) -> None:
    """mq_open with O_CREAT (its open then refused), shm_open and sem_open: nothing appears
    on the host while the program runs or after, and the caller's world-readable queue is
    never opened."""
    outcome = probes.probe_posix_ipc(tier_or_skip(tier_name), FAST)
    assert outcome.verdict == "blocked", outcome


def test_memory_files_cannot_hold_more_than_the_run_limit(tier_name: TierName) -> None:
    """memfds (whose pages RLIMIT_AS never counts), then unnamed files in /dev/shm and /tmp,
    written until 1.5 times the run's memory: refused, bounded or killed, never held."""
    outcome = probes.probe_memfd(tier_or_skip(tier_name), MEMORY)
    assert outcome.verdict in ("blocked", "contained"), outcome
    assert "HELD" not in outcome.result.stdout or int(
        outcome.result.stdout.split("HELD")[1].split()[0]) <= MEMORY.memory_bytes, outcome


OWN_PROCESS = '''
import asyncio, ctypes, os, resource, sys
os.nice(1)
resource.setrlimit(resource.RLIMIT_NOFILE, (128, 128))
cpus = len(os.sched_getaffinity(0))
os.sched_setaffinity(0, os.sched_getaffinity(0))
callback = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int)(lambda x: x * 2)  # a libffi closure


async def child() -> bytes:
    proc = await asyncio.create_subprocess_exec(sys.executable, "-c", "print(6 * 7)",
                                                stdout=asyncio.subprocess.PIPE)
    out, _ = await proc.communicate()
    return out

out = asyncio.run(child())
# its own children, group and threads answer signals (the Landlock supervisor lets them through)
import signal, subprocess, threading
sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"],
                           start_new_session=True)
os.kill(sleeper.pid, 0)
os.killpg(sleeper.pid, 0)
os.kill(0, 0)
signal.pthread_kill(threading.main_thread().ident, 0)
hdr, data = (ctypes.c_uint32 * 2)(0x20080522, sleeper.pid), (ctypes.c_uint32 * 6)()
libc = ctypes.CDLL(None, use_errno=True)
assert libc.capget(hdr, data) == 0, ctypes.get_errno()  # its child's capabilities
hdr[1] = 0
assert libc.capget(hdr, data) == 0, ctypes.get_errno()  # its own
sleeper.terminate()
killed = sleeper.wait() == -signal.SIGTERM
open(OUTPUT_PATH, "w").write(f"{cpus > 0} {callback(21)} {out.decode().strip()} {killed}")
'''


def test_honest_programs_still_manage_their_own_process(tier_name: TierName) -> None:
    """What a program may do to itself keeps working in every tier: nice, rlimits, its CPU
    set, a ctypes callback (libffi, which may try a memfd first), an asyncio subprocess
    (which would use pidfd_open where it is allowed), and signals to its own child, the
    child's group and its own thread."""
    result = run_python(OWN_PROCESS, limits=FAST, tier=tier_or_skip(tier_name),
                        output_name="out.txt")
    assert result.ok, result.stderr
    assert result.output("out.txt") == b"True 42 42 True", result
