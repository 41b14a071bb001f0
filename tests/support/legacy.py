"""A sealed run turned into what a version from before seals wrote: manifest format 1 with no
seal and StraTune's prompts of then, every event in the shape of then (fields and events that
came later dropped). Its replay no longer matches; its seal verdict is what is tested."""

from __future__ import annotations

import json
from pathlib import Path

from replay.rundir.pre_seal import PRE_SEAL_EVENTS


def downgrade_manifest(run: Path, **fields: object) -> None:
    """`"format": 1` and the `seal` key deleted: the attack on the manifest alone."""
    path = run / "manifest.json"
    manifest = json.loads(path.read_text(encoding="utf-8"))
    del manifest["seal"]
    manifest["format"] = 1
    manifest.update(fields)
    path.write_text(json.dumps(manifest, indent=2), encoding="utf-8")


def as_before_seals(run: Path) -> None:
    downgrade_manifest(run, prompt_version="3")
    kept = []
    for line in (run / "events.jsonl").read_text(encoding="utf-8").splitlines():
        data = json.loads(line)
        fields = PRE_SEAL_EVENTS.get(data["_type"])
        if fields is not None:
            kept.append(json.dumps({k: v for k, v in data.items()
                                    if k == "_type" or k in fields}))
    (run / "events.jsonl").write_text("".join(f"{line}\n" for line in kept), encoding="utf-8")
