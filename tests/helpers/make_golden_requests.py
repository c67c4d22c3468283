"""Record the golden request sequence of the paper's mode (run it on main, before a change).

    PYTHONPATH=<main checkout> python -m tests.helpers.make_golden_requests \
        ARENAS_DIR tests/data/golden_requests/paper-01-04-03.json

``test_golden_requests.py`` checks that a default run still sends exactly what it wrote.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

from tests.helpers.modes import golden_requests

if __name__ == "__main__":
    arenas, target = Path(sys.argv[1]).resolve(), Path(sys.argv[2])
    with tempfile.TemporaryDirectory() as out:
        sequence = golden_requests(arenas, Path(out))
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(sequence, indent=1) + "\n")
    print(f"{len(sequence)} requests -> {target}")
