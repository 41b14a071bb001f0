"""`stratune view`: read a run directory, render the viewer, optionally export it."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from attrs import frozen
from rich.console import Console, Group, RenderableType
from rich.text import Text

from replay.rundir import seal
from replay.rundir.output_path import check_output
from replay.rundir.serde import Manifest
from replay.rundir.trace import RunDir
from replay.viewer import build_view, candidate_detail, round_detail, summary
from replay.viewer.method_view import method_summary
from replay.viewer.model import RunView
from stratune_core.records.errors import StraTuneError
from stratune_core.round.registry import entry_of
from stratune_core.state.events import Event, SkillAdded

EXPORTS = ("svg", "html", "png", "txt")


@frozen(kw_only=True)
class LoadedRun:
    view: RunView
    manifest: Manifest | None
    usage: Any
    evaluation: Any
    events: tuple[Event, ...] = ()
    path: Path | None = None

    @property
    def is_baseline(self) -> bool:
        return self.manifest is not None and entry_of(self.manifest.method).baseline
    check: seal.Status | None = None


def load_run(path: str | Path) -> LoadedRun:
    run_dir = RunDir.at(path)
    manifest = run_dir.read_manifest()  # a run directory always has one, from its start
    _, events = run_dir.read_events()
    return LoadedRun(view=build_view(events), manifest=manifest,
                     usage=run_dir.read_json(run_dir.usage),
                     evaluation=run_dir.read_json(run_dir.evaluation), events=tuple(events),
                     check=seal.status(path), path=Path(path))


def check_line(status: seal.Status) -> Text:
    style = {seal.Integrity.INTACT: "green", seal.Integrity.ALTERED: "bold red",
             seal.Integrity.UNSEALED: "yellow"}[status.integrity]
    return Text.assemble(("check ", "bold"), (status.detail, style))


def _episode(run: LoadedRun, sample_id: str, candidate: str | None) -> RenderableType:
    """One execution read back from the cache: under `candidate`'s skill, else the final one
    (the initial skill while the run has not finished)."""
    from replay.viewer.episodes import episode

    texts = {e.skill_id: e.text for e in run.events if isinstance(e, SkillAdded)}
    if candidate is not None:
        matches = [sid for sid in texts if sid.startswith(candidate)]
        if len(matches) != 1:
            raise StraTuneError(f"--candidate {candidate}: {len(matches)} skills with this id "
                                "prefix; copy an id from the round table")
        skill_id = matches[0]
    else:
        final = run.manifest.final_id if run.manifest is not None else None
        skill_id = final if final in texts else next(iter(texts), "")
    if run.manifest is None or run.path is None or not skill_id:
        raise StraTuneError("--episode: the run holds no skill yet")
    return episode(run.path, run.manifest, texts[skill_id], skill_id, sample_id)


def renderable(run: LoadedRun, *, round_number: int | None = None,
               candidate: str | None = None, episode: str | None = None) -> RenderableType:
    if episode is not None:
        return _episode(run, episode, candidate)
    if round_number is not None:
        found = run.view.round(round_number)
        if found is None:
            raise StraTuneError(f"--round {round_number}: the run has rounds 1 to "
                                f"{len(run.view.rounds)}")
        return round_detail(run.view, found)
    if candidate is not None:
        matches = run.view.candidate_matches(candidate)
        if len(matches) != 1:
            what = "no candidate" if not matches else f"{len(matches)} candidates"
            raise StraTuneError(f"--candidate {candidate}: {what} with this id prefix; "
                                "copy an id from the round table")
        found_c = run.view.candidate(candidate)
        assert found_c is not None
        return candidate_detail(run.view, found_c, full_text=True)
    if run.is_baseline:
        picture = method_summary(run.events, run.view, run.manifest, run.usage, run.evaluation)
    else:
        picture = summary(run.view, run.manifest, run.usage, run.evaluation)
    return picture if run.check is None else Group(check_line(run.check), picture)


def show(picture: RenderableType, console: Console, *, export: str | None = None,
         output: str | Path | None = None, width: int = 120) -> Path | None:
    """Print to `console`; with `export`, also write the same picture to a file."""
    if export is not None and export not in EXPORTS:
        raise StraTuneError(f"--export {export}: use one of {', '.join(EXPORTS)}")
    if export == "png":
        _png_converter()  # fail before printing anything
    if export is not None:
        check_output(output if output is not None else f"stratune-view.{export}")
    console.print(picture)
    if export is None:
        return None
    path = Path(output) if output is not None else Path(f"stratune-view.{export}")
    recorder = Console(record=True, width=width, file=io.StringIO(), color_system="truecolor")
    recorder.print(picture)
    if export == "svg":
        path.write_text(recorder.export_svg(title="stratune view"), encoding="utf-8")
    elif export == "html":
        path.write_text(recorder.export_html(), encoding="utf-8")
    elif export == "txt":
        path.write_text(recorder.export_text(), encoding="utf-8")
    else:
        path.write_bytes(_svg_to_png(recorder.export_svg(title="stratune view")))
    return path


def _png_converter() -> Any:
    try:
        import cairosvg  # type: ignore[import-not-found]
    except (ImportError, OSError):  # OSError: the package is there but libcairo is not
        raise StraTuneError(
            "--export png needs an SVG converter (pip install cairosvg) and none is installed; "
            "use --export svg and convert it with a browser or inkscape"
        ) from None
    return cairosvg


def _svg_to_png(svg: str) -> bytes:
    return _png_converter().svg2png(bytestring=svg.encode("utf-8"))
