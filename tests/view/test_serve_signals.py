"""``view --serve`` stopped by a scheduler's SIGTERM or a closed terminal's SIGHUP, as by Ctrl-C."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 0),
                                              (signal.SIGTERM, 128 + signal.SIGTERM),
                                              (signal.SIGHUP, 128 + signal.SIGHUP)])
def test_serve_removes_its_temporary_folder_whatever_stops_it(signum, code, small_runs,
                                                              tmp_path):
    server = subprocess.Popen([sys.executable, "-m", "llm_aai.view", str(small_runs["llm"]),
                               "--serve", "0"], cwd=tmp_path, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    try:
        first = server.stdout.readline()
        folder = Path(first.removeprefix("building the site in ").split(" (")[0])
        assert folder.name.startswith("llm-aai-site-"), first
        line = first
        while not line.startswith("serving "):
            line = server.stdout.readline()
            assert line, f"the server stopped: {server.stderr.read()}"
        assert (folder / "index.html").is_file()
        server.send_signal(signum)
        out, err = server.communicate(timeout=60)
    finally:
        if server.poll() is None:
            server.kill()
            server.communicate()
    assert server.returncode == code, err
    assert "Traceback" not in err
    assert out.splitlines()[-1].startswith("stopped")
    assert not folder.exists()
