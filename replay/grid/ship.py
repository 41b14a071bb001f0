"""Copying run directories between the driver and a Ray node (`stratune grid --ship`).

A cell always lives at the same absolute path, `DIR/<task>/<pair>/<ablation>/seed<k>`, on every
machine (a replay cell's manifest names its source by that path). With --ship the driver sends
the cell's directory (to resume it) and its replay source to the node, the node runs the cell
at that path on its own disk, and sends the whole directory back when the cell ends.
"""

from __future__ import annotations

import io
import shutil
import tarfile
from collections.abc import Iterable
from pathlib import Path

MARKER = ".stratune-grid"  # holds the grid's token: a node that reads it sees DIR itself


def pack(root: Path, relative: Iterable[str]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for rel in relative:
            path = root / rel
            if path.exists():
                tar.add(path, arcname=rel)
    return buffer.getvalue()


def unpack(root: Path, data: bytes, *, replace: Iterable[str] = ()) -> None:
    """Extract under `root`; each directory in `replace` is emptied first (the archive holds
    its complete new contents)."""
    for rel in replace:
        shutil.rmtree(root / rel, ignore_errors=True)
    root.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        tar.extractall(root, filter="data")


def write_marker(root: Path, token: str) -> None:
    root.mkdir(parents=True, exist_ok=True)
    (root / MARKER).write_text(token, encoding="utf-8")


def sees_grid(root: Path, token: str) -> bool:
    try:
        return (root / MARKER).read_text(encoding="utf-8") == token
    except OSError:
        return False
