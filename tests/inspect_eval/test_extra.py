"""Without the ``inspect`` extra the package imports, and the task says how to install it."""

from __future__ import annotations

import subprocess
import sys

WITHOUT_INSPECT = "import sys; sys.modules['inspect_ai'] = None; "


def _python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", WITHOUT_INSPECT + code],
                          capture_output=True, text=True, timeout=120)


def test_package_imports_without_inspect():
    done = _python("import llm_aai.runner, llm_aai.inspect_eval, llm_aai.run; print('ok')")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


def test_task_without_inspect_names_the_extra():
    done = _python("import llm_aai.inspect_eval._registry")
    assert done.returncode != 0
    assert "pip install 'llm-aai[inspect]'" in done.stderr
