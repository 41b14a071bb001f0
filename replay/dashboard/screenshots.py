"""The docs' screenshots of the dashboard (docs/dashboard.md), made from committed traces:
the run page of `traces/demo`, and the grid page of a grid laid out from every committed run
trace (`trace_grid`). Needs the `dev` extra (playwright) and Chromium at /usr/bin/chromium
(`make test-browser` installs it):

    python -m replay.dashboard.screenshots [--out docs/images]
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from replay.dashboard.html_file import write_html
from replay.rundir.serde import manifest_from_json
from replay.rundir.trace import GRID_FILE, MANIFEST

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
# No network, no first-run work, no sandbox (CI runs as root): a browser that only renders.
CHROMIUM_ARGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync")
PAIR = "qwen0.5b-qwen1.5b"  # every committed trace has the same target and optimizer


def trace_grid(out: Path, traces: Path = ROOT / "traces") -> Path:
    """A grid directory of copies of the committed run traces, one cell per trace at
    `<task>/<pair>/<method>/seed<k>`, as `stratune grid` lays them out. Its grid.toml says
    what it is and defines no cells: the cells are the copies."""
    out.mkdir(parents=True, exist_ok=True)
    (out / GRID_FILE).write_text("# the committed traces laid out as a grid "
                                 "(replay/dashboard/screenshots.py)\n", encoding="utf-8")
    for trace in sorted(p for p in traces.iterdir() if (p / MANIFEST).is_file()):
        manifest = manifest_from_json((trace / MANIFEST).read_text(encoding="utf-8"))
        task = manifest.task.spec
        method = trace.name.removeprefix(task).removesuffix(
            f"-seed{manifest.seed}").removeprefix("-") or "full"
        # no grid_cell.json: the seal covers a cell's coordinates, and these runs were
        # recorded without any; `compare` names their methods from the manifests
        shutil.copytree(trace, out / task / PAIR / method / f"seed{manifest.seed}")
    return out


@contextmanager
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=list(CHROMIUM_ARGS))
        try:
            yield chromium
        finally:
            chromium.close()


def shoot(chromium: Any, page_file: Path, png: Path, *, hash_: str = "",
          open_round: int | None = None, height: int = 1500) -> None:
    page = chromium.new_page(viewport={"width": 1280, "height": height})
    page.goto(page_file.resolve().as_uri() + hash_)
    page.wait_for_selector("#status-line")
    if open_round is not None:  # a round opened, to show a candidate's checks and diff
        page.evaluate(f"""() => {{
            const d = document.querySelector('details[data-key="round-{open_round}"]');
            d.open = true;
            for (const c of d.querySelectorAll('details.candidate')) c.open = true;
            d.scrollIntoView(); }}""")
    page.screenshot(path=str(png))
    page.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(ROOT / "docs" / "images"))
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        run_page = write_html(ROOT / "traces" / "demo", Path(tmp) / "demo.html")
        grid_page = write_html(trace_grid(Path(tmp) / "traces-grid"), Path(tmp) / "grid.html")
        with browser() as chromium:
            shoot(chromium, run_page, out / "dashboard-run.png")
            shoot(chromium, run_page, out / "dashboard-round.png", open_round=2, height=1100)
            shoot(chromium, grid_page, out / "dashboard-grid.png", height=1700)
    for name in ("dashboard-run.png", "dashboard-round.png", "dashboard-grid.png"):
        print(out / name)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
