"""Writing a run's event log: `TraceWriter` appends each round's events (blobs first, then the
lines, flushed and fsynced); a rerun checks each new line against the line already on disk and
writes only from the first difference on (`ResumeReport` says how much it reproduced)."""

from __future__ import annotations

import os
from collections.abc import Iterable

from attrs import frozen

from replay.rundir.serde import Digest, event_to_line
from replay.rundir.trace import RunDir, naming
from stratune_core.state.events import Event, SkillAdded


@frozen(kw_only=True)
class ResumeReport:
    previous: int  # complete lines found on disk before the run
    matched: int  # how many of them the rerun reproduced exactly, from the start
    diverged_at: int | None  # 1-based line where the rerun first differed, if it did

    def describe(self) -> str:
        if self.previous == 0:
            return "new run"
        if self.diverged_at is not None:
            return (f"resumed: the first {self.matched} of {self.previous} recorded events were "
                    f"reproduced; event {self.diverged_at} differed, the log was rewritten from there")
        if self.matched < self.previous:
            return f"resumed: {self.matched} of {self.previous} recorded events reproduced so far"
        return f"resumed: all {self.previous} recorded events reproduced identically"


class TraceWriter:
    """Appends events round by round; a rerun verifies the existing prefix instead of rewriting it."""

    def __init__(self, run_dir: RunDir) -> None:
        self.run_dir = run_dir
        run_dir.path.mkdir(parents=True, exist_ok=True)
        self._previous = run_dir.read_lines()
        offset = sum(len(line.encode("utf-8")) + 1 for line in self._previous)
        self._fh = open(run_dir.events, "ab" if run_dir.events.exists() else "wb")  # noqa: SIM115
        self._fh.truncate(offset)  # drop a torn last line; "ab" appends at the new end
        self._offset_of = [0]
        for line in self._previous:
            self._offset_of.append(self._offset_of[-1] + len(line.encode("utf-8")) + 1)
        self.digest = Digest()
        self.lines: list[str] = []
        self._diverged_at: int | None = None

    @property
    def diverged(self) -> bool:
        """The rerun produced an event the log did not hold: the log was rewritten from there."""
        return self._diverged_at is not None

    @property
    def report(self) -> ResumeReport:
        matched = len(self.lines) if self._diverged_at is None else self._diverged_at - 1
        return ResumeReport(previous=len(self._previous), matched=min(matched, len(self._previous)),
                            diverged_at=self._diverged_at)

    def write(self, events: Iterable[Event]) -> None:
        """Persist one round's events: blobs first, then the lines, then flush and fsync."""
        pending: list[bytes] = []
        for event in events:
            if isinstance(event, SkillAdded):
                self.run_dir.write_blob(event.skill_id, event.text)
            line = event_to_line(event)
            index = len(self.lines)
            self.lines.append(line)
            self.digest.add(line)
            if self._diverged_at is None and index < len(self._previous):
                if self._previous[index] == line:
                    continue
                self._diverged_at = index + 1
                self._fh.truncate(self._offset_of[index])  # appends continue from here
            pending.append(line.encode("utf-8") + b"\n")
        if pending:
            try:
                self._fh.write(b"".join(pending))
                self._fh.flush()
                os.fsync(self._fh.fileno())
            except OSError as exc:
                raise naming(exc, self.run_dir.events) from None

    def finish(self) -> None:
        """The run completed: drop recorded lines the rerun did not produce, then close."""
        if self._diverged_at is None and len(self.lines) < len(self._previous):
            self._fh.truncate(self._offset_of[len(self.lines)])
            self._diverged_at = len(self.lines) + 1
        self.close()

    def close(self) -> None:
        if not self._fh.closed:
            self._fh.flush()
            os.fsync(self._fh.fileno())
            self._fh.close()
