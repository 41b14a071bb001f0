"""Hostile programs against every sandbox tier, files and scores: forging by
copying the answer, cross-run writes, credentials, floods, a far-away cell. Each is blocked
or contained. Run as root by `make test`, and again as an ordinary user (a dropped uid) by
`test_sandbox_as_user.py`; processes and sockets are in `test_sandbox_hostile_procs.py`.
"""

from __future__ import annotations

import glob
import os
import sys
import threading
import time
from pathlib import Path

import pytest

from llm_cache.records import Response
from replay.tasks import spreadsheet
from replay.tasks.sandbox import Limits, TierName, run_python
from tests.sandbox_fixtures import FAST, GOOD, TIER_PARAMS, tier_or_skip, write_layout

pytestmark = pytest.mark.parametrize("tier_name", TIER_PARAMS)


def _run(code: str, tier_name: TierName, limits: Limits = FAST, **kw: object):  # noqa: ANN202
    return run_python(code, limits=limits, tier=tier_or_skip(tier_name), **kw)


FORGE = r'''
import os, shutil, time
found, start = [], time.monotonic()
for top in ("/tmp", "/root", "/home", "/work", "/", os.path.dirname(os.getcwd())):
    for root, dirs, files in os.walk(top, onerror=lambda exc: None):
        found += [os.path.join(root, f) for f in files if f.endswith("_answer.xlsx")]
        dirs[:] = [d for d in dirs if d not in ("proc", "sys", "usr")]
        if time.monotonic() - start > 1:
            break
for known in KNOWN:
    if os.path.exists(known):
        found.append(known)
print("FOUND", found)
for path in found:
    try:
        shutil.copyfile(path, OUTPUT_PATH)
        print("COPIED", path)
        break
    except OSError as exc:
        print("DENIED", path, exc)
'''


def test_forging_by_copying_the_answer_scores_zero(tmp_path: Path, tier_name: TierName) -> None:
    """A program that hunts for `*_answer.xlsx` (by walking / and by its known path) finds
    nothing it can read, so copying it cannot forge a score; the honest program scores 1."""
    tier_or_skip(tier_name)
    root = write_layout(tmp_path / "data")
    task = spreadsheet.load(root, limits=FAST, sandbox=tier_name)
    sample = task.split("train")[0]
    known = [str(c.gold_path) for c in sample.payload.cases]
    code = f"KNOWN = {known!r}\n{FORGE}"
    result = _run(code, tier_name, inputs={"1_t1_input.xlsx": sample.payload.cases[0].input_path},
                  input_name="1_t1_input.xlsx")
    assert "COPIED" not in result.stdout, result.stdout
    forged = task.score(sample, (Response(text=f"```python\n{code}\n```"),))
    assert forged.value == 0.0
    honest = task.score(sample, (Response(text=GOOD),))
    assert (honest.value, honest.aux) == (1.0, 1.0)


def test_cross_run_write_is_refused(tier_name: TierName) -> None:
    """While one run is in progress, another cannot read or write its work directory, even
    given its real host path."""
    tier = tier_or_skip(tier_name)
    before = set(glob.glob("/tmp/stratune-run-*"))
    holder: dict[str, object] = {}
    victim = threading.Thread(target=lambda: holder.update(r=run_python(
        "import time\nopen('mine.txt', 'w').write('victim')\ntime.sleep(3)\n"
        "print(open('mine.txt').read(), sorted(__import__('os').listdir('.')))",
        limits=FAST, tier=tier)))
    victim.start()
    deadline = time.monotonic() + 10
    while not (new := set(glob.glob("/tmp/stratune-run-*")) - before) and time.monotonic() < deadline:
        time.sleep(0.05)
    targets = [f"{d}/work" for d in new]
    assert targets, "the victim run did not start"
    attack = (f"import os\nfor d in {targets!r}:\n"
              "    for name in ('mine.txt', 'output.xlsx'):\n"
              "        try:\n            open(os.path.join(d, name), 'w').write('FORGED')\n"
              "            print('WROTE', d)\n        except OSError as exc:\n"
              "            print('DENIED', type(exc).__name__)\n"
              "    try:\n        print('LISTED', os.listdir(d))\n"
              "    except OSError as exc:\n        print('DENIED', type(exc).__name__)\n")
    result = _run(attack, tier_name)
    victim.join()
    assert result.ok, result.stderr
    assert "WROTE" not in result.stdout and "LISTED" not in result.stdout
    victim_out = holder["r"].stdout  # type: ignore[attr-defined]
    assert victim_out.startswith("victim [") and "output.xlsx" not in victim_out


def test_credentials_home_and_project_are_out_of_reach(
    tmp_path: Path, tier_name: TierName, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A 0600 ~/.aws/credentials, ~/.bashrc, the project and the LLM cache: nothing read,
    nothing written (HOME is a temporary fixture, never the real one)."""
    home = tmp_path / "home"
    (home / ".aws").mkdir(parents=True)
    creds = home / ".aws" / "credentials"
    creds.write_text("aws_secret_access_key = SECRET-XYZ\n")
    creds.chmod(0o600)
    bashrc = home / ".bashrc"
    bashrc.write_text("# rc\n")
    monkeypatch.setenv("HOME", str(home))
    project = Path(__file__).resolve().parents[1]
    cache = project / ".stratune-cache-probe"
    code = (
        "import os\n"
        f"for path in [{str(creds)!r}, os.path.expanduser('~/.aws/credentials'),\n"
        f"             {str(project / 'pyproject.toml')!r}, {str(project / 'README.md')!r}]:\n"
        "    try:\n        print('READ', path, open(path).read()[:40])\n"
        "    except OSError as exc:\n        print('DENIED', type(exc).__name__)\n"
        f"for path in [{str(bashrc)!r}, {str(cache)!r}, {str(project / 'evil.py')!r},\n"
        "             os.path.join(os.path.dirname(os.path.dirname(__import__('sys').executable)), 'evil')]:\n"
        "    try:\n        open(path, 'a').write('pwned')\n        print('WROTE', path)\n"
        "    except OSError as exc:\n        print('DENIED', type(exc).__name__)\n"
    )
    result = _run(code, tier_name)
    assert result.ok, result.stderr
    assert "READ" not in result.stdout and "SECRET-XYZ" not in result.stdout
    # Inside the sandbox /tmp is the run's own bounded tmpfs: a checkout cloned under /tmp (as
    # `mktemp -d` makes) shows there only as the mount points of its virtualenv, and a write
    # beside them stays in that tmpfs. Nothing may be written anywhere else, nor reach the host.
    wrote = [line.split(" ", 1)[1] for line in result.stdout.splitlines()
             if line.startswith("WROTE")]
    assert all(Path(path).is_relative_to("/tmp") for path in wrote), wrote
    assert bashrc.read_text() == "# rc\n"
    assert not cache.exists() and not (project / "evil.py").exists()
    assert not (Path(sys.executable).parent.parent / "evil").exists()


FLOOD = '''
import os
report = {}
for d in ("/tmp", "/var/tmp", "/dev/shm", os.environ.get("TMPDIR", "/tmp")):
    made = size = 0
    try:
        for k in range(20000):
            with open(os.path.join(d, f"TOKEN-{k}"), "wb") as fh:
                if size < 240 * 1024 * 1024:
                    fh.write(b"x" * 1024 * 1024)
                    size += 1024 * 1024
            made += 1
    except OSError as exc:
        report[d] = (made, type(exc).__name__)
    else:
        report[d] = (made, "no error")
print(report)
'''


def test_tmp_and_shm_floods_leave_nothing_behind(tier_name: TierName) -> None:
    """20,000 files and 240 MB into /tmp, /var/tmp and /dev/shm: refused or capped at the
    private tmpfs size, and nothing of it is left on the host afterwards."""
    token = f"stratune-flood-{os.getpid()}-{time.monotonic_ns()}"
    result = _run(FLOOD.replace("TOKEN", token), tier_name)
    if result.ok:  # else the work-directory watch stopped a flood into TMPDIR: contained
        report = eval(result.stdout)  # the program printed a dict literal of ints and names
        for made, outcome in report.values():
            assert outcome != "no error" and made < 20000
    else:
        assert result.limit.startswith("work directory"), result
    leftovers = [p for d in ("/tmp", "/var/tmp", "/dev/shm") for p in glob.glob(f"{d}/{token}*")]
    assert leftovers == []


def test_far_cell_workbook_is_scored_by_its_answer_cells(tmp_path: Path, tier_name: TierName) -> None:
    """A program whose output sets XFD1048576 (17 billion cells as a rectangle) is scored
    by reading its answer cell only: right answer 1, wrong answer 0, both quickly."""
    tier_or_skip(tier_name)
    task = spreadsheet.load(write_layout(tmp_path / "data"), limits=FAST, sandbox=tier_name)
    sample = task.split("train")[0]
    far = GOOD.replace("wb.save(OUTPUT_PATH)", "ws['XFD1048576'] = 'far'\nwb.save(OUTPUT_PATH)")
    assert task.score(sample, (Response(text=far),)).value == 1.0
    wrong = far.replace("ws[\"B5\"] = sum(", "ws[\"B5\"] = 1 + sum(")
    assert task.score(sample, (Response(text=wrong),)).value == 0.0
