"""Small frames are rasterized in the caller's thread unless the process says otherwise;
where Mesa rasterizes never changes a pixel.

Each case runs in a fresh interpreter: Mesa reads ``LP_NUM_THREADS`` once, when the process's
first OpenGL context starts, and names its rasterizer threads ``llvmpipe-N``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

_DRAW = """
import glob, json, os, sys
from tests.sim.test_small_frame_geometry import frame_hashes
hashes = frame_hashes(int(sys.argv[1]))
threads = [open(p).read().strip() for p in glob.glob("/proc/self/task/*/comm")]
print(json.dumps({"setting": os.environ.get("LP_NUM_THREADS"), "hashes": hashes,
                  "rasterizers": sum(name.startswith("llvmpipe-") for name in threads)}))
"""


def draw_in_fresh_process(resolution: int, lp_num_threads: str | None) -> dict:
    """Frame hashes, the setting Mesa saw and its rasterizer threads, in a new process."""
    env = {key: value for key, value in os.environ.items() if key != "LP_NUM_THREADS"}
    if lp_num_threads is not None:
        env["LP_NUM_THREADS"] = lp_num_threads
    done = subprocess.run([sys.executable, "-c", _DRAW, str(resolution)], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=300, check=True)
    return json.loads(done.stdout.splitlines()[-1])


def test_small_frames_are_rasterized_in_the_callers_thread_unless_the_process_says_otherwise():
    default = draw_in_fresh_process(84, None)
    two_threads = draw_in_fresh_process(84, "2")

    assert (default["setting"], default["rasterizers"]) == ("0", 0)
    assert (two_threads["setting"], two_threads["rasterizers"]) == ("2", 2)
    # every pose of every scene hashes alike
    assert len(default["hashes"]) == 16
    assert default["hashes"] == two_threads["hashes"]


def test_large_frames_keep_mesas_threads_and_their_pixels():
    default = draw_in_fresh_process(512, None)
    caller = draw_in_fresh_process(512, "0")

    assert default["setting"] is None
    assert default["rasterizers"] >= 1  # Mesa's own: one a core, up to its cap
    assert caller["rasterizers"] == 0
    assert default["hashes"] == caller["hashes"]
