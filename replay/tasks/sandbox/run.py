"""Run one untrusted Python program in the sandbox tier this machine offers."""

from __future__ import annotations

import contextlib
import json
import os
import resource
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path

from attrs import field, frozen

from replay.tasks.sandbox import bubblewrap, landlock_tier, workspace
from replay.tasks.sandbox.cgroup import RunGroup
from replay.tasks.sandbox.cleanup import read_regular, remove_tree
from replay.tasks.sandbox.layout import NOBODY, RunDir
from replay.tasks.sandbox.limits import DEFAULT_LIMITS, Limits, apply_rlimits
from replay.tasks.sandbox.tier import Tier, TierName

RUNNER = Path(__file__).with_name("runner.py")
_SUPERVISOR_GRACE = 10.0  # the supervisor enforces the wall time; this is the backstop
_WATCH_SECONDS = 0.25  # how often the work directory's size is checked
_NAMESPACE_GRACE = 10.0  # for the kernel to end a namespace whose bwrap was killed


@frozen(kw_only=True)
class SandboxResult:
    exit_code: int | None  # None: killed (wall timeout or a limit)
    timed_out: bool
    limit: str = ""  # the run limit that stopped it, if not the wall time
    stdout: str
    stderr: str
    outputs: tuple[tuple[str, bytes], ...] = field(default=(), converter=tuple)
    output_problem: str = ""  # why the output file did not come back, if it did not

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out and not self.limit

    def output(self, name: str) -> bytes | None:
        return next((data for n, data in self.outputs if n == name), None)


def _env(home: str, tmp: str) -> dict[str, str]:
    return {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": home, "TMPDIR": tmp,
            "LANG": "C.UTF-8", "PYTHONNOUSERSITE": "1", "PYTHONDONTWRITEBYTECODE": "1",
            "PYTHONHASHSEED": "0", "OMP_NUM_THREADS": "1"}


def _tail(path: Path, limit: int = 2000) -> str:
    with open(path, "rb") as fh:
        fh.seek(max(0, os.fstat(fh.fileno()).st_size - limit))
        return fh.read().decode("utf-8", "replace")


def _prepare(tier: Tier, run: RunDir, code: str, inputs: Mapping[str, Path | bytes],
             limits: Limits) -> bool:
    """Lay out the run directory; True when the work directory is a bounded tmpfs."""
    run.prog.mkdir()
    run.work.mkdir()
    uid = NOBODY if tier.name is TierName.BUBBLEWRAP else landlock_tier.program_uid()
    bounded = workspace.privileged() and workspace.mount_work(run, limits, uid)
    for name, source in inputs.items():
        target = run.work / Path(name).name
        if isinstance(source, bytes):
            target.write_bytes(source)
        else:
            shutil.copyfile(source, target)
    if tier.name is TierName.LANDLOCK:
        (run.work / ".tmp").mkdir()
    shutil.copyfile(RUNNER, run.prog / "runner.py")
    (run.prog / "solution.py").write_text(code, encoding="utf-8")
    if workspace.privileged():
        workspace.hand_over(run, uid)
    return bounded


def _command(tier: Tier, run: RunDir, input_name: str, output_name: str, limits: Limits,
             others: int, info: int) -> tuple[list[str], list[int]]:
    """The argv that starts the run, and the fds it must inherit (`others`: this process's
    other runs under way; `info`: where bwrap writes the namespace's PID)."""
    if tier.name is TierName.BUBBLEWRAP:
        prog, work = bubblewrap.PROG, bubblewrap.WORK
        nproc = dict(limits.rlimits(cgroup=tier.cgroup)).get(resource.RLIMIT_NPROC)
        argv = [sys.executable, "-I", str(prog / "runner.py"), str(prog / "solution.py"),
                str(work / input_name), str(work / output_name)]
        argv += [str(nproc)] if nproc else []
        return bubblewrap.command(run, argv, _env(str(work), "/tmp"), limits, info)
    argv = [sys.executable, "-I", str(run.prog / "runner.py"), str(run.prog / "solution.py"),
            str(run.work / input_name), str(run.work / output_name)]
    env = _env(str(run.work), str(run.work / ".tmp"))
    return landlock_tier.command(run, argv, env, limits, cgroup=tier.cgroup, others=others), []


def _start(tier: Tier, argv: list[str], fds: list[int], run: RunDir, group: RunGroup | None,
           limits: Limits) -> subprocess.Popen[bytes]:
    # The Landlock supervisor sets the program's rlimits itself and must stay free to kill.
    # RLIMIT_NPROC is left to the runner inside bubblewrap's user namespace: on bwrap it
    # would also cap the namespace's creation against all the user's processes.
    rlimits = tuple((k, v) for k, v in limits.rlimits(cgroup=tier.cgroup)
                    if k != resource.RLIMIT_NPROC) if tier.name is TierName.BUBBLEWRAP else ()

    def setup() -> None:
        if group is not None:
            group.join()
        apply_rlimits(rlimits)

    with open(run.stdout, "wb") as out, open(run.stderr, "wb") as err:
        return subprocess.Popen(argv, cwd=run.base, env={"PATH": "/usr/bin:/bin"},
                                stdin=subprocess.DEVNULL, stdout=out, stderr=err, pass_fds=fds,
                                start_new_session=True, preexec_fn=setup)  # noqa: PLW1509


def _over_quota(work: Path, limits: Limits, root: int | None = None) -> str:
    """Why the work directory is over its size or file-count limit, '' if it is not; with
    `root`, the run's first process, files its processes unlinked while open count too."""
    total = files = 0
    if root is not None:
        total, problem = workspace.held_unlinked(root, work, limits.file_bytes)
        if problem:
            return problem
        if total > limits.work_bytes:
            return f"work directory grew past {limits.work_bytes >> 20} MiB"
    stack = [work]
    while stack:
        try:
            entries = list(os.scandir(stack.pop()))
        except OSError:
            continue
        for entry in entries:
            files += 1
            with contextlib.suppress(OSError):
                if entry.is_dir(follow_symlinks=False):
                    stack.append(Path(entry.path))
                else:
                    total += entry.stat(follow_symlinks=False).st_blocks * 512
            if files > limits.work_files:
                return f"work directory holds more than {limits.work_files} files"
            if total > limits.work_bytes:
                return f"work directory grew past {limits.work_bytes >> 20} MiB"
    return ""


def _stop(proc: subprocess.Popen[bytes], bwrap: bool) -> None:
    """Killing bwrap kills its namespace (--die-with-parent); the Landlock supervisor kills
    its descendants on SIGTERM, and is killed outright if it does not."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL if bwrap else signal.SIGTERM)
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def _wait(tier: Tier, proc: subprocess.Popen[bytes], run: RunDir, limits: Limits,
          bounded: bool) -> tuple[int | None, bool, str]:
    """(exit code, timed out, limit that stopped the run) while watching the work dir."""
    bwrap = tier.name is TierName.BUBBLEWRAP
    deadline = time.monotonic() + limits.wall_seconds + (0 if bwrap else _SUPERVISOR_GRACE)
    code: int | None = None
    # A pidfd wakes the moment the process ends (Popen.wait(timeout) polls in 50 ms steps).
    pidfd = os.pidfd_open(proc.pid)
    try:
        while code is None:
            left = deadline - time.monotonic()
            if left <= 0:
                _stop(proc, bwrap)
                return None, True, ""
            if select.select([pidfd], [], [], min(left, _WATCH_SECONDS))[0]:
                code = proc.wait()
            elif not bounded and (problem := _over_quota(run.work, limits, proc.pid)):
                _stop(proc, bwrap)
                return None, False, problem
    finally:
        os.close(pidfd)
    # Without a kernel bound a fast writer can finish between two looks: look once more.
    full = workspace.full(run.work) if bounded else _over_quota(run.work, limits)
    if bwrap:
        return code, False, full
    try:
        outcome = json.loads((run.base / "result.json").read_text())
    except (OSError, ValueError):
        return code if code else 125, False, full
    return outcome["exit_code"], bool(outcome["timed_out"]), full


def run_python(
    code: str,
    *,
    inputs: Mapping[str, Path | bytes] | None = None,
    input_name: str = "input.xlsx",
    output_name: str = "output.xlsx",
    limits: Limits = DEFAULT_LIMITS,
    tier: Tier,
) -> SandboxResult:
    """Run `code` with INPUT_PATH/OUTPUT_PATH set, cwd = a fresh directory holding `inputs`.

    The tier is the caller's pick (`tiers.choose`), so the code never runs unconfined.
    """
    run = RunDir(Path(tempfile.mkdtemp(prefix="stratune-run-")))
    with landlock_tier.in_flight() as others:
        group: RunGroup | None = None
        bounded = False
        info, info_w = os.pipe()  # bwrap reports its namespace's PID here
        owned = [info, info_w]
        namespace: int | None = None
        try:
            bounded = _prepare(tier, run, code, inputs or {}, limits)
            argv, fds = _command(tier, run, input_name, output_name, limits, others, info_w)
            owned += fds
            if tier.cgroup:
                group = RunGroup.create(limits.memory_bytes, limits.processes)
            bwrap = tier.name is TierName.BUBBLEWRAP
            proc = _start(tier, argv, [*fds, info_w] if bwrap else fds, run, group, limits)
            for fd in (*fds, info_w):  # the child has its copies
                owned.remove(fd)
                os.close(fd)
            if bwrap:
                namespace = bubblewrap.namespace_pidfd(info)
            exit_code, timed_out, limit = _wait(tier, proc, run, limits, bounded)
            if namespace is not None:  # bwrap is gone; its namespace follows within moments
                select.select([namespace], [], [], _NAMESPACE_GRACE)
            if group is not None:  # nothing of the run may write after this point
                group.remove()
            data, problem = read_regular(run.work / output_name, limits.file_bytes)
            outputs = () if data is None else ((output_name, data),)
            return SandboxResult(exit_code=exit_code, timed_out=timed_out, limit=limit,
                                 stdout=_tail(run.stdout), stderr=_tail(run.stderr), outputs=outputs,
                                 output_problem=problem)
        finally:
            for fd in owned:
                os.close(fd)
            if namespace is not None:
                os.close(namespace)
            if group is not None:
                group.remove()
            if bounded:
                workspace.unmount_work(run)
            remove_tree(run.base)
