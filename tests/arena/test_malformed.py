"""Every file in malformed/ states on its first line the problem the checker must report."""

from pathlib import Path

import pytest

from llm_aai.arena.validate import errors_only
from llm_aai.arena.yaml_io import check_file

MALFORMED = Path(__file__).parent / "malformed"
FILES = sorted(MALFORMED.glob("*.yaml"))


def expectation(path: Path) -> str:
    first = path.read_bytes().split(b"\n", 1)[0].decode()
    assert first.startswith("# expect: "), f"{path.name} lacks an '# expect:' first line"
    return first.removeprefix("# expect: ")


def test_corpus_is_large_enough():
    assert len(FILES) >= 20


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_malformed_file_reports_file_line_field(path):
    expected = expectation(path)
    problems = errors_only(check_file(path))
    assert problems, f"{path.name}: no error reported"
    messages = [str(p) for p in problems]
    assert all(m.startswith(f"{path}") for m in messages)
    located = [m[len(str(path)):].lstrip(": ") for m in messages]
    assert any(m.startswith(expected) for m in located), located
