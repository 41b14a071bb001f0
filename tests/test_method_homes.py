"""Every method has one home (issue 51): outside its own files, a method is named in at most 4
product modules (GEPA in 6: it is also a hybrid generator and a package adapter). The readers
ask the method's registry entry instead (`methods/entry.MethodEntry`), so a new method touches
its own files and the few lists every method is in: the `Method` member and settings record
(`records/method_spec.py`), its budget purposes (`records/purposes.py`), the baselines' list
(`methods/baselines.py`) and, where it is an example of the grid file, `replay/grid/spec.py`."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from stratune_core.records.method_spec import Method, default_method, generator_of, hybrid_spec
from stratune_core.round.registry import METHODS

ROOT = Path(__file__).resolve().parent.parent
PRODUCT = ("replay", "stratune_core", "llm_cache", "stratune")
# each method: how code and text name it (its name, its record's and its own events' classes),
# where its own files are, and how many other product modules may name it
NAMED = {
    Method.GEPA: (r"gepa", "stratune_core/methods/gepa_", 6),
    Method.TEXTGRAD: (r"text_?grad", "stratune_core/methods/textgrad", 4),
    Method.SKILLOPT: (r"skill_?opt|EditsSelected|EpochReviewed", "stratune_core/methods/skillopt",
                      4),
    Method.TRACE2SKILL: (r"trace2skill|LessonsExtracted|ConsolidationDone",
                         "stratune_core/methods/trace2skill", 4),
    Method.ITER_COT: (r"iter[-_ ]?cot|RevisionRound|SummaryChecked|ExemplarsChosen",
                      "stratune_core/methods/iter_cot", 4),
    # StraTune is the product: its own files are the round's; elsewhere it is named by its
    # record and member
    Method.STRATUNE: (r"StraTuneMethod|Method\.STRATUNE", "stratune_core/round/", 4),
}


def naming(pattern: str, own: str, root: Path = ROOT) -> list[str]:
    """The product modules outside `own` whose text matches `pattern` (case-insensitively)."""
    rx = re.compile(pattern, re.I)
    return sorted(rel for package in PRODUCT for path in (root / package).rglob("*.py")
                  if not (rel := str(path.relative_to(root))).startswith(own)
                  and "/testing/" not in rel and rx.search(path.read_text()))


def test_every_method_is_measured():
    assert set(NAMED) == set(METHODS)


@pytest.mark.parametrize("method", list(NAMED), ids=lambda m: m.value)
def test_a_method_is_named_in_few_modules_outside_its_own_files(method):
    pattern, own, limit = NAMED[method]
    found = naming(pattern, own)
    assert any((ROOT / own).parent.glob(Path(own).name + "*")), own  # its own files exist
    assert len(found) <= limit, f"{method.value} is named in {len(found)} modules: {found}"


def test_the_measure_sees_a_method_named_in_a_reader(tmp_path):
    """A reader that dispatches on a method's event is counted; the method's own file is not."""
    (tmp_path / "replay").mkdir()
    (tmp_path / "replay" / "reader.py").write_text("if isinstance(e, GepaIteration): ...\n")
    (tmp_path / "stratune_core" / "methods").mkdir(parents=True)
    (tmp_path / "stratune_core" / "methods" / "gepa_run.py").write_text("GEPA = 1\n")
    pattern, own, _ = NAMED[Method.GEPA]
    assert naming(pattern, own, tmp_path) == ["replay/reader.py"]


def test_only_the_default_method_is_no_baseline_and_takes_a_generator():
    assert [m for m, e in METHODS.items() if not e.baseline] == [default_method().method]
    assert generator_of(default_method()) is None
    for entry in METHODS.values():
        if entry.propose is not None:
            spec = hybrid_spec(entry.method.value)
            assert generator_of(spec) is not None and spec.method is default_method().method
