"""Writes words/ (train.jsonl, test.jsonl, initial_skill.txt): the toy world of the test suite
(tests/support/toy.py) as a custom JSONL task, so the example grid runs through the real CLI.
Run from the repository root: python -m examples.grid.make_words"""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.support.toy import INITIAL_SKILL, expected_answer, make_samples

HERE = Path(__file__).resolve().parent


def lines(n: int, offset: int) -> list[str]:
    out = []
    for sample in make_samples(n, offset):
        word, marker = sample.payload["word"], sample.payload["marker"]
        out.append(json.dumps({
            "id": sample.id, "stratum": marker,
            "input": f"Word: {word} [{marker}] (apply the rule for marker [{marker}])",
            "expected": re.escape(expected_answer(word, marker))}))
    return out


def main() -> None:
    folder = HERE / "words"
    folder.mkdir(exist_ok=True)
    (folder / "train.jsonl").write_text("\n".join(lines(48, 0)) + "\n", encoding="utf-8")
    (folder / "test.jsonl").write_text("\n".join(lines(24, 1000)) + "\n", encoding="utf-8")
    (folder / "initial_skill.txt").write_text(INITIAL_SKILL + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
