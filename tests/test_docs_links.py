"""Links in the README and docs/ lead somewhere real, and nothing cites text outside the repository.

A relative link must name an existing file, and its `#anchor` an existing heading of that file
under GitHub's slug rule (lowercase, punctuation dropped, spaces to hyphens); the numbered
sections of docs/released-code.md get the same anchor from mkdocs too. Code and docs must not
cite the private description of the released code that docs/released-code.md replaced: a user
has no way to follow such a cite."""

from __future__ import annotations

import os
import re
import unicodedata
from collections.abc import Iterator
from pathlib import Path

import attrs

ROOT = Path(__file__).resolve().parents[1]
FENCE = re.compile(r"^\s*(```|~~~)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
LINK = re.compile(r"(?<!!)\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
CODE_SPAN = re.compile(r"(`+)(.+?)\1")
# Cites of the out-of-repo notes; written in two parts so that this file does not match itself.
FORBIDDEN = ("notes/" + "official_stratune", "notes " + "§")
SKIPPED_DIRS = {".git", ".venv", "venv", "node_modules", "__pycache__", "build", "dist"}


@attrs.frozen
class BrokenLink:
    source: str
    line: int
    target: str
    why: str


def _plain(heading: str) -> str:
    """The heading as rendered text: code spans, emphasis and link targets removed."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    text = text.replace("`", "")
    text = re.sub(r"(\*\*|\*)(\S.*?\S|\S)\1", r"\2", text)
    return re.sub(r"(?<!\w)(__|_)(\S.*?\S|\S)\1(?!\w)", r"\2", text)  # not snake_case


def github_slug(heading: str) -> str:
    return re.sub(r"[^\w\- ]", "", _plain(heading).strip().lower()).replace(" ", "-")


def mkdocs_slug(heading: str) -> str:
    """python-markdown's default `toc` slugify."""
    text = unicodedata.normalize("NFKD", _plain(heading)).encode("ascii", "ignore").decode()
    text = re.sub(r"[^\w\s-]", "", text).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def _prose_lines(text: str) -> Iterator[tuple[int, str]]:
    """(line number, line) outside fenced code blocks."""
    fenced = False
    for number, line in enumerate(text.splitlines(), 1):
        if FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            yield number, line


def headings(text: str) -> list[str]:
    return [m.group(2) for _, line in _prose_lines(text) if (m := HEADING.match(line))]


def anchors(text: str) -> set[str]:
    """GitHub's heading anchors; a repeated slug gets -1, -2, ... in order."""
    seen: dict[str, int] = {}
    found: set[str] = set()
    for heading in headings(text):
        slug = github_slug(heading)
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        found.add(slug if count == 0 else f"{slug}-{count}")
    return found


def broken_links(markdown: Path, root: Path) -> list[BrokenLink]:
    text = markdown.read_text(encoding="utf-8")
    source = markdown.relative_to(root).as_posix()
    broken: list[BrokenLink] = []
    for number, line in _prose_lines(text):
        for match in LINK.finditer(CODE_SPAN.sub("", line)):
            target = match.group(1)
            if re.match(r"[a-z][a-z0-9+.-]*:", target, re.I) or target.startswith("/"):
                continue  # a URL (or a site-absolute path), not a file of the repository
            path, _, anchor = target.partition("#")
            file = (markdown.parent / path).resolve() if path else markdown
            if not file.exists():
                broken.append(BrokenLink(source, number, target, "no such file"))
            elif (anchor and file.suffix == ".md"
                  and anchor not in anchors(file.read_text(encoding="utf-8"))):
                broken.append(BrokenLink(source, number, target, "no such heading"))
    return broken


def _documents(root: Path) -> list[Path]:
    return [root / "README.md", *sorted((root / "docs").glob("*.md"))]


def _repository_files(root: Path, suffixes: tuple[str, ...]) -> Iterator[Path]:
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS and not d.startswith(".")
                         and not d.endswith(".egg-info"))
        for name in sorted(files):
            if name.endswith(suffixes):
                yield Path(folder) / name


# --- the checks on this repository ---------------------------------------------------------


def test_every_relative_link_names_an_existing_file_and_heading():
    broken = [b for doc in _documents(ROOT) for b in broken_links(doc, ROOT)]
    assert not broken, "\n".join(f"{b.source}:{b.line}: {b.target} ({b.why})" for b in broken)


def test_released_code_sections_are_linked_from_the_released_profile():
    """The released profile's cites (docs/profiles.md) land on numbered sections of
    docs/released-code.md."""
    profiles = (ROOT / "docs" / "profiles.md").read_text(encoding="utf-8")
    cited = set(re.findall(r"\]\(released-code\.md#([^)]+)\)", profiles))
    page = (ROOT / "docs" / "released-code.md").read_text(encoding="utf-8")
    sections = anchors(page)
    numbered = [h for h in headings(page) if re.match(r"\d+(\.\d+)? ", h)]
    assert len(numbered) > 40
    assert all(github_slug(h) == mkdocs_slug(h) for h in numbered)  # stable in either renderer
    assert {"12-warm-up", "46-decision-rule", "411-saved-pool-and-final-selection"} <= cited
    assert cited <= sections
    assert len(re.findall(r"\[§[\d.]+\]\(released-code\.md#", profiles)) >= 35


def test_nothing_cites_the_out_of_repository_notes():
    me = Path(__file__).resolve()
    hits = [f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
            for path in _repository_files(ROOT, (".py", ".md")) if path.resolve() != me
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
            if any(cite in line for cite in FORBIDDEN)]
    assert not hits, "\n".join(hits)


# --- the checker itself ----------------------------------------------------------------------


def test_slugs_follow_the_renderers():
    assert github_slug("4.6 Decision rule") == "46-decision-rule"
    assert github_slug("1.2 Warm-up") == "12-warm-up"
    assert github_slug("Grids and the paper's tables") == "grids-and-the-papers-tables"
    assert github_slug("Stopping a run: cost cap, timeout, STOP file") == \
        "stopping-a-run-cost-cap-timeout-stop-file"
    assert github_slug("The `--config` file") == "the---config-file"
    assert mkdocs_slug("The `--config` file") == "the-config-file"
    text = "# A\n## Setup\n```bash\n# not a heading\n```\n## Setup\n## The `--config` file\n"
    assert anchors(text) == {"a", "setup", "setup-1", "the---config-file"}
    assert github_slug("The warmup_solved field") == "the-warmup_solved-field"
    assert github_slug("A **bold** _claim_") == "a-bold-claim"


def test_the_checker_reports_missing_files_and_headings(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "page.md").write_text("# Page\n\n## 4.6 Decision rule\n")
    (tmp_path / "README.md").write_text(
        "See [§4.6](docs/page.md#46-decision-rule) and [the top](#intro).\n\n# Intro\n"
        "[gone](docs/page.md#47-further-validation), [missing](docs/other.md),\n"
        "[self](#nowhere), [web](https://example.org/x#y), `[code](nowhere.md)`\n"
        "```\n[fenced](nowhere.md)\n```\n")
    broken = broken_links(tmp_path / "README.md", tmp_path)
    assert [(b.line, b.target, b.why) for b in broken] == [
        (4, "docs/page.md#47-further-validation", "no such heading"),
        (4, "docs/other.md", "no such file"),
        (5, "#nowhere", "no such heading")]


def test_the_scan_finds_a_cite_of_the_notes(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "rule.py").write_text(f'"""The rule ({FORBIDDEN[1]}4.6)."""\n')
    (tmp_path / ".venv").mkdir()
    (tmp_path / ".venv" / "dep.py").write_text(f"# {FORBIDDEN[0]}.md\n")
    found = [p.relative_to(tmp_path).as_posix() for p in _repository_files(tmp_path, (".py",))
             if any(cite in p.read_text() for cite in FORBIDDEN)]
    assert found == ["pkg/rule.py"]
