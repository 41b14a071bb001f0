"""A hostile program that hides disk use from the work directory's watch: files written,
unlinked while held open (or mapped, their fd closed), so a walk of the directory no longer
sees them while their blocks stay taken. Shared by `test_sandbox_hostile_kernel.py` and
`benchmarks/sandbox_probes.py`; same conventions as `sandbox_probes.py`.
"""

from __future__ import annotations

from replay.tasks.sandbox import Limits, Tier, run_python, workspace
from tests.sandbox_probes import Outcome, verdict

UNLINKED = '''
import mmap, os, time
chunk, held, keep = b"x" * (1 << 20), 0, []
for k in range(FILES):
    fd = os.open(f"held{k}", os.O_CREAT | os.O_RDWR, 0o600)
    for _ in range(3):
        os.write(fd, chunk)
    os.unlink(f"held{k}")  # gone from the directory, its blocks still taken
    if MAPPED:  # then only a mapping holds it
        keep.append(mmap.mmap(fd, 0))
        os.close(fd)
    else:
        keep.append(fd)
    held += 3
print("HELD", held, flush=True)
time.sleep(5)
open(OUTPUT_PATH, "w").write(str(held))
'''


def probe_unlinked(tier: Tier, limits: Limits, *, mapped: bool = False) -> Outcome:
    """3 MiB files unlinked while held open, then as many mapped after their fd was closed,
    each set twice the work directory's limit, with no kernel bound on it (the tmpfs root
    would mount is refused, as for a user): escaped when the run ends ok holding them."""
    files = 2 * limits.work_bytes // (3 << 20) + 1
    saved = workspace._can_mount[0]
    workspace._can_mount[0] = False
    try:
        outcomes = [run_python(f"FILES = {files}\nMAPPED = {m}\n{UNLINKED}", limits=limits,
                               tier=tier, output_name="out.txt")
                    for m in ((mapped,) if mapped else (False, True))]
    finally:
        workspace._can_mount[0] = saved
    escapes = [f"{'mapped' if k else 'open'}: held {files * 3} MiB past the "
               f"{limits.work_bytes >> 20} MiB work directory" for k, r in enumerate(outcomes) if r.ok]
    worst = next((r for r in outcomes if r.ok), outcomes[-1])
    return verdict(worst, escapes)
