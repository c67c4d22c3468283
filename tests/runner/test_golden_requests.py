"""The default run sends what it sent before the modes existed, request for request.

``tests/data/golden_requests/paper-01-04-03.json`` was recorded on main before this change
(``make_golden_requests.py``): every request's messages, texts and the sha256 of every image
sent, for four replies covering a script, an invalid reply and a thought-only reply. Its
64 px images' sha256 were recorded again when frames under 128 px got coarser curves
(``llm_aai.sim.render.curve_tessellation``); nothing else in it changed.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers.modes import golden_requests

GOLDEN = Path(__file__).resolve().parents[1] / "data" / "golden_requests" / "paper-01-04-03.json"


def test_the_papers_mode_sends_the_golden_request_sequence(testbed_dir, tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    expected = json.loads(GOLDEN.read_text())
    sent = golden_requests(Path(testbed_dir), tmp_path)
    assert len(sent) == len(expected) == 4
    for number, (now, then) in enumerate(zip(sent, expected, strict=True), start=1):
        assert now == then, f"request {number} differs from the golden sequence"
    images = [sum(part.startswith("image sha256") for m in request["messages"]
                  for part in m["parts"]) for request in sent]
    assert images == [3, 4, 5, 6]  # three opening pictures, then one a reply, history kept
