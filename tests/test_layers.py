"""The package's import structure: layers that only import downwards, imports at module top.

The layers, the rules that ``cli`` sits on top and ``sim`` and ``arena`` at the bottom, and
"no import cycles" are import-linter contracts in ``pyproject.toml`` (``[tool.importlinter]``);
these tests run them, and show on a copy of the package with an upward import added that they
can fail.
"""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import llm_aai

PACKAGE = Path(llm_aai.__file__).parent
PYPROJECT = PACKAGE.parent / "pyproject.toml"
CONTRACTS = len(tomllib.loads(PYPROJECT.read_text())["tool"]["importlinter"]["contracts"])

LAZY_DEPENDENCIES = {
    "litellm": ("llm/quiet_import.py",),
    "animalai": ("env/backends/unity.py",),
    "matplotlib": ("analysis/plots.py",),
    "imageio": ("replay/animation.py",),
    "imageio_ffmpeg": ("replay/animation.py",),
    "mujoco": ("sim/", "oracle/navigation.py", "oracle/tools.py"),
}
"""Third-party packages imported only inside functions, and the only modules that import them.

litellm takes seconds to import and only model calls need it; animalai is the optional
``unity`` extra; matplotlib, imageio and ffmpeg are needed only to draw figures and write
animations; MuJoCo (and with it the OpenGL context ``sim/render.py`` creates) loads when a
simulator is first built, so ``import llm_aai`` and the env's registration stay light. The
oracle's walking map casts MuJoCo rays into the simulator's own scene (its privilege as a
planner); a ray query on ``Simulator`` would let it drop this exception.
jinja2 (a fraction of a second, and what ``view`` is for) is imported at module top;
playwright is used by the tests only.
Each is wrapped by these modules, so the project's own modules can import one another at
module top without any exception: no ``llm_aai`` import sits inside a function.
"""


def _lint(package_root: Path) -> subprocess.CompletedProcess:
    """Run import-linter with the project's contracts on the ``llm_aai`` under ``package_root``."""
    code = ("import sys\nfrom importlinter.cli import lint_imports\n"
            f"sys.exit(lint_imports(config_filename={str(PYPROJECT)!r}, no_cache=True,"
            " no_logo=True))\n")
    env = {**os.environ, "PYTHONPATH": str(package_root)}
    return subprocess.run([sys.executable, "-c", code], cwd=package_root, env=env,
                          capture_output=True, text=True, timeout=120)


def test_the_package_keeps_its_layer_contracts():
    done = _lint(PACKAGE.parent)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"Contracts: {CONTRACTS} kept, 0 broken" in done.stdout


@pytest.fixture(scope="module")
def package_copy(tmp_path_factory) -> Path:
    """A copy of the package's Python files, to break on purpose."""
    root = tmp_path_factory.mktemp("layers")
    shutil.copytree(PACKAGE, root / "llm_aai",
                    ignore=lambda folder, names: [n for n in names if not (
                        n.endswith(".py") or (Path(folder) / n).is_dir()) or n == "__pycache__"])
    return root


@pytest.mark.parametrize(("module", "added", "broken"), [
    ("sim/coords.py", "import llm_aai.cli.run",
     ["the simulator imports only the arena model", "only the `python -m` entry-point shims",
      "llm_aai is layered", "no import cycles"]),
    ("runner/config.py", "from llm_aai.cli import run",
     ["only the `python -m` entry-point shims", "llm_aai is layered", "no import cycles"]),
    ("sim/rules.py", "from llm_aai.logs import store",
     ["the simulator imports only the arena model", "llm_aai is layered"]),
    ("arena/errors.py", "import llm_aai.sim.coords",
     ["the arena model imports nothing else", "llm_aai is layered", "no import cycles"]),
    ("arena/schema.py", "import llm_aai.arena.yaml_io",
     ["no import cycles"]),
    ("newcomer/__init__.py", "",
     ["llm_aai is layered"]),
], ids=["sim->cli", "runner->cli", "sim->logs", "arena->sim", "arena-cycle", "unplaced-package"])
def test_an_upward_import_breaks_the_contracts(package_copy, module, added, broken):
    path = package_copy / "llm_aai" / module
    original = path.read_text() if path.exists() else None
    path.parent.mkdir(exist_ok=True)
    path.write_text((original or "") + f"\n{added}\n")
    try:
        done = _lint(package_copy)
    finally:
        if original is None:
            shutil.rmtree(path.parent)
        else:
            path.write_text(original)
    assert done.returncode == 1, done.stdout
    report = done.stdout.split("Contracts: ", 1)[0]
    for name in broken:
        assert any(name in line and "BROKEN" in line for line in report.splitlines()), (
            f"{name!r} not reported broken:\n{done.stdout}")
    assert f"Contracts: {CONTRACTS - len(broken)} kept, {len(broken)} broken" in done.stdout


def _imports(tree: ast.Module):
    """Yield ``(node, top_module, nested)`` for each import; type-checking-only ones are skipped."""
    def walk(node: ast.AST, nested: bool):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                continue
            if isinstance(child, ast.Import):
                for alias in child.names:
                    yield child, alias.name.split(".")[0], nested
            elif isinstance(child, ast.ImportFrom):
                top = "llm_aai" if child.level else (child.module or "").split(".")[0]
                yield child, top, nested
            yield from walk(child, nested or isinstance(
                child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef))
    yield from walk(tree, False)


def nested_project_imports(source: str) -> list[int]:
    """The lines of ``source`` that import ``llm_aai`` inside a function or class."""
    return [node.lineno for node, top, nested in _imports(ast.parse(source))
            if nested and top == "llm_aai"]


def test_project_imports_sit_at_module_top():
    nested = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        if lines := nested_project_imports(path.read_text()):
            nested[str(path.relative_to(PACKAGE))] = lines
    assert nested == {}


def test_the_nested_import_check_sees_a_nested_import():
    source = ("from typing import TYPE_CHECKING\nimport llm_aai.arena\n"
              "if TYPE_CHECKING:\n    from llm_aai.sim import Simulator\n"
              "def f():\n    import os\n    from llm_aai.cli import run\n"
              "class C:\n    def g(self):\n        from . import frames\n")
    assert nested_project_imports(source) == [7, 10]


def test_heavy_dependencies_are_imported_lazily_and_only_where_listed():
    misplaced = []
    for path in sorted(PACKAGE.rglob("*.py")):
        where = path.relative_to(PACKAGE).as_posix()
        for node, top, nested in _imports(ast.parse(path.read_text())):
            allowed = LAZY_DEPENDENCIES.get(top)
            if allowed is not None and not (nested and where.startswith(allowed)):
                misplaced.append(f"{where}:{node.lineno} imports {top}")
    assert misplaced == []
