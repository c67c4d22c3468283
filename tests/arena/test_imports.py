"""The arena package's modules import each other without cycles, all at module top."""

from __future__ import annotations

import ast
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

import llm_aai.arena

PACKAGE = Path(llm_aai.arena.__file__).parent


def _arena_imports(path: Path) -> tuple[set[str], list[int]]:
    """The arena modules ``path`` imports, and the lines of those not at module top."""
    tree = ast.parse(path.read_text())
    top = {id(node) for node in tree.body}
    imported, nested = set(), []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("llm_aai.arena."):
            imported.add(node.module.removeprefix("llm_aai.arena."))
            if id(node) not in top:
                nested.append(node.lineno)
    return imported, nested


def test_arena_modules_form_no_import_cycle():
    graph, nested = {}, {}
    for path in sorted(PACKAGE.glob("*.py")):
        if path.stem != "__init__":
            graph[path.stem], lines = _arena_imports(path)
            if lines:
                nested[path.name] = lines
    assert nested == {}
    try:
        order = list(TopologicalSorter(graph).static_order())
    except CycleError as error:
        raise AssertionError(f"import cycle among arena modules: {error.args[1]}") from None
    assert order.index("yaml_nodes") < order.index("schema") < order.index("yaml_io")
    assert order.index("validate") < order.index("yaml_io")
