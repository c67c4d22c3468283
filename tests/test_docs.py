"""The README as a front page and the docs as its reference: kept true as the code moves.

The README stays short (a front page, not the manual), names the command CI runs, and
never a folder only this repository's developers have. Every relative link in it and in
``docs/`` reaches a file (and a heading, where it names one). ``docs/layout.md`` lists
every package and top-level module with its layer, in the order of the import-linter
``layers`` contract, so a package added, moved or renamed without its page fails here.
"""

from __future__ import annotations

import re
import shlex
import tomllib
from pathlib import Path

import pytest

import llm_aai

PACKAGE = Path(llm_aai.__file__).parent
REPO = PACKAGE.parent
README = REPO / "README.md"
DOCS = REPO / "docs"
LAYOUT = DOCS / "layout.md"
README_MAX_LINES = 250

FENCE = re.compile(r"^(```|~~~).*?^\1", re.MULTILINE | re.DOTALL)
INLINE_CODE = re.compile(r"(`+).+?\1", re.DOTALL)
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.MULTILINE)
LAYER_ROW = re.compile(r"^\|\s*(\d+)\s*\|\s*`([A-Za-z_][A-Za-z0-9_]*)`\s*\|", re.MULTILINE)
FOLDER_ROW = re.compile(r"^\|\s*`([A-Za-z_][A-Za-z0-9_/]*)`\s*\|", re.MULTILINE)


def markdown_pages() -> list[Path]:
    return [README, *sorted(DOCS.glob("*.md"))]


def prose(text: str) -> str:
    """The text without code blocks and inline code, where brackets are not links."""
    return INLINE_CODE.sub("", FENCE.sub("", text))


def relative_links(text: str) -> list[str]:
    return [target for target in LINK.findall(prose(text))
            if not re.match(r"^[a-z][a-z0-9+.-]*:", target, re.IGNORECASE)]


def anchor(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    words = re.sub(r"[`*_]", "", heading).strip().lower()
    return re.sub(r"[^\w\- ]", "", words).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    return {anchor(heading) for heading in HEADING.findall(FENCE.sub("", page.read_text()))}


def broken_links(page: Path) -> list[str]:
    broken = []
    for target in relative_links(page.read_text(encoding="utf-8")):
        path_part, _, fragment = target.partition("#")
        destination = (page.parent / path_part).resolve() if path_part else page
        if not destination.exists():
            broken.append(f"{page.name}: {target} (no such file)")
        elif fragment and destination.suffix == ".md" and fragment not in anchors(destination):
            broken.append(f"{page.name}: {target} (no such heading)")
    return broken


def contract_layers() -> list[set[str]]:
    """The ``layers`` contract of pyproject.toml: one set of names per layer, top first."""
    config = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["importlinter"]
    (contract,) = [c for c in config["contracts"] if c.get("id") == "layers"]
    return [{name.strip() for name in layer.split("|")} for layer in contract["layers"]]


def page_layers(text: str) -> list[set[str]]:
    """The layer table of docs/layout.md: one set of names per layer number, in order."""
    rows = LAYER_ROW.findall(text)
    assert rows, "docs/layout.md has no '| layer | `name` | purpose |' rows"
    numbers = sorted({int(number) for number, _ in rows})
    assert numbers == list(range(1, len(numbers) + 1)), f"layers numbered {numbers}"
    return [{name for number, name in rows if int(number) == layer} for layer in numbers]


def code_units() -> set[str]:
    """Every package (a folder with ``__init__.py``) and top-level module of ``llm_aai``."""
    packages = {p.parent.name for p in PACKAGE.glob("*/__init__.py")}
    modules = {p.stem for p in PACKAGE.glob("*.py") if p.name != "__init__.py"}
    return packages | modules


def test_readme_is_a_front_page():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES, (
        f"README.md has {len(lines)} lines (at most {README_MAX_LINES}): move reference to docs/")


def test_readme_gives_the_command_ci_runs():
    commands = [line.strip() for line in (REPO / ".ci" / "run").read_text().splitlines()
                if line.strip() and not line.lstrip().startswith("#")]
    last = " ".join(shlex.split(commands[-1]))
    assert last == "make test"
    assert f"`{last}`" in README.read_text() or f"\n{last}" in README.read_text()


def test_readme_names_no_developer_only_folder():
    text = README.read_text(encoding="utf-8")
    assert "../shared" not in text
    assert f"{REPO.parent}/" not in text  # the folder this checkout sits in: a machine's path


@pytest.mark.parametrize("page", markdown_pages(), ids=lambda page: page.name)
def test_every_relative_link_reaches_a_file(page):
    assert broken_links(page) == []


def test_a_broken_link_or_heading_is_found(tmp_path):
    (tmp_path / "there.md").write_text("# A heading\n\n## Its `code` part\n")
    page = tmp_path / "page.md"
    page.write_text("[ok](there.md#a-heading) [ok too](there.md#its-code-part) [gone](missing.md)\n"
                    "[bad](there.md#nowhere) `[code](ignored.md)` [web](https://example.org/x.md)\n"
                    "![picture](img/none.png)\n")
    assert broken_links(page) == ["page.md: missing.md (no such file)",
                                  "page.md: there.md#nowhere (no such heading)",
                                  "page.md: img/none.png (no such file)"]


def test_layout_lists_the_layers_in_the_contracts_order():
    assert page_layers(LAYOUT.read_text(encoding="utf-8")) == contract_layers()


def test_layout_lists_every_package_and_module_and_nothing_else():
    listed = set().union(*page_layers(LAYOUT.read_text(encoding="utf-8")))
    assert sorted(code_units() - listed) == [], "in llm_aai/ but not in docs/layout.md"
    assert sorted(listed - code_units()) == [], "in docs/layout.md but not in llm_aai/"


def test_layout_names_every_folder_of_the_package_and_repository():
    text = LAYOUT.read_text(encoding="utf-8")
    folders = set(FOLDER_ROW.findall(text))
    data_folders = {p.name for p in PACKAGE.iterdir()
                    if p.is_dir() and p.name != "__pycache__" and not (p / "__init__.py").exists()}
    assert sorted(data_folders - folders) == [], "folders of llm_aai/ missing from the page"
    for folder in folders - code_units():
        assert (PACKAGE / folder).is_dir() or (REPO / folder).is_dir(), f"{folder}: no such folder"


def test_the_layout_check_fails_on_a_changed_page():
    text = LAYOUT.read_text(encoding="utf-8")
    swapped = text.replace("| 12 | `script` |", "| 11 | `script` |", 1)
    assert swapped != text
    assert page_layers(swapped) != contract_layers()
    dropped = text.replace("| 8 | `oracle` |", "| 8 | `orakel` |", 1)
    assert "oracle" not in set().union(*page_layers(dropped))


TESTBED_SIZE = re.compile(r"(?:900 files,|arenas \()\s*(?:about\s+)?([\d.]+)\s*MB")


def test_every_page_gives_the_testbed_the_size_it_has(testbed_dir):
    measured = sum(p.stat().st_size for p in testbed_dir.glob("*.yaml")) / 1e6
    stated = {page.name: TESTBED_SIZE.findall(page.read_text(encoding="utf-8"))
              for page in [README, *DOCS.glob("*.md"), PACKAGE / "arena" / "catalog.py"]}
    stated = {page: sizes for page, sizes in stated.items() if sizes}
    assert {"README.md", "arenas.md", "installing.md", "catalog.py"} <= set(stated)
    for page, sizes in stated.items():
        assert all(abs(float(size) - measured) < 0.1 for size in sizes), (page, sizes, measured)


def test_installing_lists_every_extra():
    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"][
        "optional-dependencies"]
    text = (DOCS / "installing.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\|([^|\n]*)\|", text, re.MULTILINE)
    listed = {name for row in rows for name in re.findall(r"`([a-z0-9-]+)`", row)}
    assert sorted(set(extras) - listed) == [], "extras missing from docs/installing.md"
    locked = re.search(r"^EXTRAS\s*:=(.*)$", (REPO / "Makefile").read_text(), re.MULTILINE)
    after = text.split("`requirements-test.lock` holds")[1]
    lock_sentence = " ".join(after.split(".")[0].split())
    for extra in re.findall(r"--extra (\S+)", locked.group(1)):
        assert f"`{extra}`" in lock_sentence, f"the lock's {extra} extra is not said"
