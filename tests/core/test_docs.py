"""The docs hold together: every link to a page or a section of one (from the docs, the README and the
code's comments) reaches it, every file they name exists, and the README stays a short page for users."""

from __future__ import annotations

import functools
import itertools
import re
from pathlib import Path

from markdown_it import MarkdownIt
from markdown_it.token import Token

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", ROOT / "packaging" / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
CODE = [
    *ROOT.glob("recall_gui/**/*.py"),
    *ROOT.glob("recall_gui/**/*.pyi"),
    *ROOT.glob("bench/*.py"),
    *ROOT.glob("tests/**/*.py"),
    *ROOT.glob("packaging/**/*.py"),
    ROOT / "Makefile",
    ROOT / "pyproject.toml",
]
#: A section named in code: ``docs/PERFORMANCE_LOG.md#the-map`` (a page without its folder is in docs/).
CODE_LINK = re.compile(r"((?:docs/|\.\./)?[A-Z][A-Z_]*\.md)#([\w-]+)")
#: A file of the project named in a page: ``core/session/exact.py``, ``tests/core/test_docs.py``, …
NAMED_FILE = re.compile(
    r"(?<![\w/.<-])((?:recall_gui/)?(?:core|qt|cli|mcp)/[\w/.-]*\w|(?:tests|bench|packaging)/[\w/.-]*\w)"
)
#: Named but not in the repository: the benchmark's data, built on first use and git-ignored.
NOT_COMMITTED = {"bench/data", "bench/data/lsql-venv"}

markdown = MarkdownIt("commonmark").enable("table")


def tokens(page: Path) -> list[Token]:
    return markdown.parse(page.read_text(encoding="utf-8"))


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")


@functools.cache
def anchors(page: Path) -> set[str]:
    found: set[str] = set()
    parsed = tokens(page)
    for opening, inline in itertools.pairwise(parsed):
        if opening.type != "heading_open":
            continue
        text = "".join(
            child.content for child in inline.children or [] if child.type in ("text", "code_inline")
        )
        anchor, n = slug(text), 0
        while (anchor if n == 0 else f"{anchor}-{n}") in found:
            n += 1
        found.add(anchor if n == 0 else f"{anchor}-{n}")
    return found


def links(page: Path) -> list[str]:
    out: list[str] = []
    for token in tokens(page):
        for child in token.children or []:
            target = child.attrGet("href") if child.type == "link_open" else child.attrGet("src")
            if isinstance(target, str) and not re.match(r"[a-z]+:", target):
                out.append(target)
    return out


def broken(source: Path, path: Path, anchor: str | None) -> str | None:
    if not path.exists():
        return f"{source.relative_to(ROOT)}: {path} does not exist"
    if anchor and anchor not in anchors(path):
        return f"{source.relative_to(ROOT)}: no section #{anchor} in {path.relative_to(ROOT)}"
    return None


def test_every_link_in_the_pages_reaches_its_page_and_section() -> None:
    problems = []
    for page in PAGES:
        for target in links(page):
            path, _, anchor = target.partition("#")
            problems.append(broken(page, (page.parent / path).resolve() if path else page, anchor or None))
    assert [p for p in problems if p] == []


def test_every_section_the_code_points_to_is_there() -> None:
    problems, seen = [], 0
    for source in CODE:
        for page, anchor in CODE_LINK.findall(source.read_text(encoding="utf-8")):
            name = page.removeprefix("docs/").removeprefix("../")
            path = ROOT / "docs" / name if (ROOT / "docs" / name).exists() else ROOT / name
            problems.append(broken(source, path, anchor))
            seen += 1
    assert seen > 30  # the comments do point at the log's sections
    assert [p for p in problems if p] == []


def file_exists(named: str) -> bool:
    path = named if not named.startswith(("core/", "qt/", "cli/", "mcp/")) else f"recall_gui/{named}"
    stem = path.rsplit(".", 1)[0]  # `core/base/credentials.masked` names a function of a module
    return named in NOT_COMMITTED or any((ROOT / p).exists() for p in (path, f"{path}.py", f"{stem}.py"))


def test_every_file_the_pages_name_exists() -> None:
    missing = [
        f"{page.relative_to(ROOT)}: {named}"
        for page in PAGES
        for named in NAMED_FILE.findall(page.read_text(encoding="utf-8"))
        if not file_exists(named)
    ]
    assert missing == []


def test_the_docs_index_has_a_line_for_each_page_and_the_readme_points_to_it() -> None:
    index = ROOT / "docs" / "README.md"
    entries = [line for line in index.read_text(encoding="utf-8").splitlines() if line.startswith("- [")]
    linked = [link[1] for line in entries if (link := re.match(r"- \[[^]]+\]\(([\w.]+)\)", line))]
    pages = sorted(page.name for page in (ROOT / "docs").glob("*.md") if page != index)
    assert len(pages) >= 10
    assert sorted(linked) == pages  # each page once; the index's other lines lead out of docs/
    assert "(docs/README.md)" in (ROOT / "README.md").read_text(encoding="utf-8")


def test_the_readme_is_short() -> None:
    assert len((ROOT / "README.md").read_bytes()) <= 18_000  # for users; maintainers' notes are in docs/


def test_the_readme_opens_with_make_run_and_make_test() -> None:
    first_block = (ROOT / "README.md").read_text(encoding="utf-8").split("```sh\n", 1)[1].split("```")[0]
    commands = [line.split("#")[0].strip() for line in first_block.splitlines()[:2]]
    assert commands == ["make run", "make test"]
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert re.search(r"^run:", makefile, re.MULTILINE) and re.search(r"^test:", makefile, re.MULTILINE)


#: A test file cited in docs/GUARANTEES.md.
TEST_FILE = re.compile(r"tests/[\w/]+/test_\w+\.py")


def guarantee_rows(glance: str) -> list[tuple[str, set[str]]]:
    """The table's rows: the section each row's guarantee links to, and the test files the row names."""
    rows = []
    for line in glance.splitlines():
        if not line.startswith("| ") or line.startswith("| Guarantee |"):
            continue
        guarantee, tests = line.strip("|").rsplit("|", 1)
        anchor = re.search(r"\]\(#([\w-]+)\)", guarantee)
        assert anchor, f"a row that links to no section: {line}"
        rows.append((anchor[1], set(TEST_FILE.findall(tests))))
    return rows


def test_the_guarantees_are_a_table_then_one_section_for_each_row() -> None:
    text = (ROOT / "docs" / "GUARANTEES.md").read_text(encoding="utf-8")
    sections = dict(part.split("\n", 1) for part in text.split("\n## ")[1:])
    assert next(iter(sections)) == "At a glance"
    rows = guarantee_rows(sections.pop("At a glance"))
    assert 25 <= len(rows) <= 40  # one page, before the particulars
    cited = set().union(*(tests for _, tests in rows))
    assert len(cited) > 40
    assert sorted(path for path in cited if not (ROOT / path).is_file()) == []
    # Each row leads to a section of its own, and each section is a row's.
    anchors = [anchor for anchor, _ in rows]
    by_anchor = {slug(heading): body for heading, body in sections.items()}
    assert len(set(anchors)) == len(anchors)
    assert sorted(set(anchors) ^ set(by_anchor)) == []
    # A section names no test file its row leaves out: the table names every test the page cites.
    outside_its_row = {
        anchor: sorted(set(TEST_FILE.findall(by_anchor[anchor])) - tests) for anchor, tests in rows
    }
    assert {anchor: files for anchor, files in outside_its_row.items() if files} == {}
