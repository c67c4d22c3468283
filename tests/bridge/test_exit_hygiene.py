"""No player outlives its client, and the documented first try runs as printed."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from llm_aai.bridge.launcher import install
from llm_aai.bridge.options import IDLE_TIMEOUT_ENV
from tests.helpers.arenas import GOAL_AHEAD, write_arena

REPO = Path(__file__).resolve().parents[2]
DOCUMENTS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
FENCED_BASH = re.compile(r"```bash\n(.*?)```", re.S)


def players_in(folder: Path) -> list[int]:
    """Bridge players running with ``folder`` as their working directory."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            command = (entry / "cmdline").read_bytes().split(b"\0")
            cwd = os.readlink(entry / "cwd")
        except OSError:  # gone, or not ours to read
            continue
        if b"llm_aai.bridge" in command and b"serve" in command and Path(cwd) == folder:
            found.append(int(entry.name))
    return found


def wait_until(condition, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.2)
    return condition()


def documented_first_tries() -> list[tuple[str, str]]:
    """Every ``bash`` block of the README and docs/ that installs the bridge: (file, text)."""
    blocks = []
    for document in DOCUMENTS:
        for block in FENCED_BASH.findall(document.read_text(encoding="utf-8")):
            if "llm_aai.bridge install" in block:
                blocks.append((document.name, block))
    return blocks


def test_there_is_a_documented_first_try():
    assert any(name == "README.md" for name, _ in documented_first_tries())


@pytest.mark.parametrize("document, commands", documented_first_tries())
def test_documented_example_runs_as_printed(document, commands, tmp_path):
    """The README's example named arena.yml, which nobody has: animalai raised
    FileNotFoundError and then hung at exit. Run as printed, in an empty folder."""
    python_dir = str(Path(sys.executable).parent)  # `python` is this venv's
    env = {**os.environ, "PATH": f"{python_dir}:{os.environ['PATH']}",
           "ANIMALAI_AUTO_DOWNLOAD": "0", IDLE_TIMEOUT_ENV: "20"}
    shell = subprocess.Popen(["bash", "-e", "-c", commands], cwd=tmp_path, env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             start_new_session=True)
    try:
        stdout, stderr = shell.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        os.killpg(shell.pid, signal.SIGKILL)  # the shell and the client it started
        stdout, stderr = shell.communicate()
        pytest.fail(f"{document}: the example hung\n{stderr[-2000:]}")
    assert shell.returncode == 0, f"{document}: {stderr[-2000:]}"
    assert "['AnimalAI?team=0']" in stdout
    assert players_in(tmp_path) == []


def test_player_stops_when_its_client_stops_talking(tmp_path):
    """A client whose AnimalAIEnvironment fails after the handshake (here: a missing arena
    file) hangs at exit in mlagents_envs' gRPC thread, which the player cannot end; the
    player stops after the idle timeout instead of waiting with it for ever."""
    install(tmp_path / "env")
    script = ("from animalai.environment import AnimalAIEnvironment as E\n"
              "E(file_name='env/AAI.x86_64', arenas_configurations='missing.yml',"
              " resolution=32, timeout=30)\n")
    client = subprocess.Popen([sys.executable, "-c", script], cwd=tmp_path,
                              env={**os.environ, IDLE_TIMEOUT_ENV: "3"},
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        assert wait_until(lambda: players_in(tmp_path), 60), "the player never started"
        started = time.monotonic()
        assert wait_until(lambda: not players_in(tmp_path), 30), "the player outlived its wait"
        assert time.monotonic() - started < 30
        assert client.poll() is None  # the client itself still hangs: animalai's doing
    finally:
        client.kill()
        _, stderr = client.communicate(timeout=30)
    assert b"FileNotFoundError" in stderr
    assert b"no word from animalai for 3 s" in stderr


def test_player_stops_when_its_client_is_killed(tmp_path):
    install(tmp_path / "env")
    arena = write_arena(tmp_path, GOAL_AHEAD)
    script = ("import time\nfrom animalai.environment import AnimalAIEnvironment as E\n"
              f"E(file_name='env/AAI.x86_64', arenas_configurations={str(arena)!r},"
              " resolution=32, timeout=30)\nprint('ready', flush=True)\ntime.sleep(120)\n")
    client = subprocess.Popen([sys.executable, "-c", script], cwd=tmp_path,
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        assert client.stdout.readline() == b"ready\n"
        assert players_in(tmp_path)
        client.send_signal(signal.SIGKILL)
        assert wait_until(lambda: not players_in(tmp_path), 15), "the player outlived its client"
    finally:
        client.kill()
        client.wait(timeout=30)


@pytest.mark.parametrize("value", ["soon", "0", "-5", "nan", "inf", "1e12"])
def test_bad_idle_timeout_is_a_one_line_error(value, monkeypatch, capfd):
    from llm_aai.cli.bridge import serve_main

    monkeypatch.setenv(IDLE_TIMEOUT_ENV, value)
    assert serve_main(["--mlagents-port", "5005"]) == 3
    assert IDLE_TIMEOUT_ENV in capfd.readouterr().err
