"""docs/design.md's "Extending" table says, for each axis (method, provider, form, target kind,
task), the exact files a new entry touches. This keeps it true: every file it lists exists, an
existing entry of each axis is named in product code only in the listed files and its own, and
a provider added as one row (a scripted dry addition) is read by every reader of the table."""

from __future__ import annotations

import io
import re
import tokenize
from pathlib import Path

import pytest

from llm_cache.backends import backend_for
from llm_cache.backends.function import FunctionBackend
from llm_cache.errors import SpecError
from llm_cache.model_spec import ModelSpec
from llm_cache.providers import PROVIDERS, Provider
from llm_cache.records import Response
from llm_cache.spec import parse_spec

ROOT = Path(__file__).resolve().parent.parent
PRODUCT = ("stratune_core", "llm_cache", "replay", "stratune")
# Each axis's existing entry that stands for a new one: its name in the table's `<name>` paths,
# the identifiers that name it in code and its whole-string spellings
STANDS_FOR = {
    "method": ("trace2skill", r"(?i)trace2skill|LessonsExtracted|ConsolidationDone",
               {"trace2skill"}),
    "provider": ("openai", r"(?i)^openai|OpenAICompat", {"openai"}),
    "form": ("F3", r"^F3$", {"F3"}),
    "target kind": ("agent", r"^AGENT$|^AgentTask$", {"agent"}),
    "task": ("mind2web", r"(?i)mind2web", {"mind2web"}),
}


def axis_table() -> dict[str, tuple[str, list[str], list[str]]]:
    """axis -> (registry, the files every new entry touches, those it touches when it needs)."""
    text = (ROOT / "docs/design.md").read_text()
    section = text[text.index("## Extending"):]
    rows = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 4 and cells[0] in STANDS_FOR:
            paths = [re.findall(r"`([\w/<>.]+\.py)`", c) for c in cells[1:]]
            rows[cells[0]] = (paths[0][0], paths[1], paths[2])
    return rows


def _named(path: Path, names: str, spellings: set[str]) -> bool:
    """Whether code in `path` names the entry: an identifier matching `names`, or a string that
    is exactly one of `spellings` (docstrings, comments and prose examples do not count)."""
    rx = re.compile(names)
    for tok in tokenize.generate_tokens(io.StringIO(path.read_text()).readline):
        if tok.type == tokenize.NAME and rx.search(tok.string):
            return True
        if (tok.type == tokenize.STRING and re.fullmatch(r"[\"'][^\"']*[\"']", tok.string)
                and tok.string[1:-1] in spellings):
            return True
    return False


def naming(names: str, spellings: set[str], root: Path = ROOT) -> set[str]:
    return {str(p.relative_to(root)) for d in PRODUCT for p in (root / d).rglob("*.py")
            if "/testing/" not in str(p) and _named(p, names, spellings)}


def test_the_table_has_every_axis():
    assert set(axis_table()) == set(STANDS_FOR)


@pytest.mark.parametrize("axis", list(STANDS_FOR))
def test_every_listed_file_exists(axis):
    registry, touched, when = axis_table()[axis]
    name = STANDS_FOR[axis][0]
    assert registry in touched and (ROOT / registry).is_file()
    for path in touched:  # the stand-in's own files resolve `<name>`
        assert list(ROOT.glob(path.replace("<name>", name + "*"))), path
    for path in when:  # some entry of the axis has it
        assert list(ROOT.glob(path.replace("<name>", "*"))), path


@pytest.mark.parametrize("axis", list(STANDS_FOR))
def test_an_entry_is_named_only_in_the_listed_files_and_its_own(axis):
    _, touched, when = axis_table()[axis]
    name, names, spellings = STANDS_FOR[axis]
    listed = {p for p in touched + when if "<name>" not in p}
    own = {str(p.relative_to(ROOT)) for path in touched + when if "<name>" in path
           for p in ROOT.glob(path.replace("<name>", name + "*"))}
    found = naming(names, spellings)
    assert found, f"{axis}: the stand-in {name} is named nowhere: the check sees nothing"
    assert found - listed - own == set(), f"{axis}: {name} is also named in"


def test_the_check_sees_a_reader_that_names_an_entry(tmp_path):
    (tmp_path / "replay").mkdir()
    (tmp_path / "replay" / "reader.py").write_text('if form == "F3":\n    """F3 prose."""\n')
    (tmp_path / "replay" / "prose.py").write_text('"""F3 only in a docstring."""\nX = "e.g. F3"\n')
    assert naming(r"^F3$", {"F3"}, tmp_path) == {"replay/reader.py"}


def _echo(spec: str, provider: str, body: str, options: tuple) -> ModelSpec:
    return ModelSpec(provider=provider, model=body, canonical=f"echo/{body}", options=options)


class EchoBackend(FunctionBackend):
    """A provider's backend as a new module would define it: built by `from_spec`."""

    @classmethod
    def from_spec(cls, parsed: ModelSpec, **options: object) -> EchoBackend:
        del options
        return cls(_unanswered, name=f"echo:{parsed.model}")


def _unanswered(request: object) -> Response:
    raise RuntimeError("the dry addition's backend is built, never called")


def test_a_provider_is_one_row_and_one_module(monkeypatch):
    """A scripted dry addition: a row naming a backend class is parsed, listed in the unknown
    provider's error, checked for its options and built, with nothing else changed."""
    row = Provider(form="echo:<model>", parse=_echo, backend=f"{__name__}:EchoBackend",
                   options=frozenset({"max_retries"}))
    monkeypatch.setitem(PROVIDERS, "echo", row)
    parsed = parse_spec("echo:small?max_retries=2")
    assert (parsed.provider, parsed.model, parsed.canonical) == ("echo", "small", "echo/small")
    with pytest.raises(SpecError, match="echo"):
        parse_spec("nope:x")
    with pytest.raises(SpecError, match="no option 'threads'"):
        parse_spec("echo:small?threads=2")
    with pytest.raises(SpecError, match="holds a space"):
        parse_spec("echo:two words")
    backend = backend_for("echo:small?max_retries=2")
    assert isinstance(backend, EchoBackend) and backend.max_retries == 2
