"""The unity backend driving the real ``animalai`` 6.2.0 over the real wire.

The player is ``llm_aai.bridge`` (the Unity build cannot be downloaded here): every test
goes through ``AnimalAIEnvironment``, its gRPC server and a player process, so what is
checked is what the backend sends to and reads from the real client. The last test (marked
``unity``) runs a real Unity build instead; it is skipped unless LLM_AAI_UNITY_BUILD is set.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from llm_aai.arena.errors import ArenaError
from llm_aai.bridge.launcher import install
from llm_aai.env.backends.base import Backend
from llm_aai.env.backends.unity import UnityBackend, UnityUnavailable, camera_to_uint8

RES = 64
RANDOM_WORLD = """
    !ArenaConfig
    arenas:
      0: !Arena
        timeLimit: 100
        items:
        - !Item
          name: GoodGoal
        - !Item
          name: Wall
"""


@pytest.fixture(scope="module")
def launcher(tmp_path_factory) -> Path:
    return install(tmp_path_factory.mktemp("unity") / "env")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("localhost", 0))
        return probe.getsockname()[1]


def _arena(folder: Path, text: str = RANDOM_WORLD, name: str = "arena.yml") -> Path:
    path = folder / name
    path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    return path


def _backend(launcher, **kwargs) -> UnityBackend:
    kwargs.setdefault("base_port", _free_port())
    kwargs.setdefault("timeout", 20)
    return UnityBackend(launcher, resolution=RES, **kwargs)


def test_missing_package_names_the_extra_and_the_python(monkeypatch):
    monkeypatch.setitem(sys.modules, "animalai", None)
    monkeypatch.setitem(sys.modules, "animalai.environment", None)
    with pytest.raises(UnityUnavailable) as info:
        UnityBackend()
    message = str(info.value)
    assert "pip install 'llm-aai[unity]'" in message
    if sys.version_info < (3, 14):
        version = ".".join(map(str, sys.version_info[:3]))
        assert "Python >= 3.14" in message and version in message


def test_plays_an_episode_with_aais_observations(launcher, recording_dir):
    backend = _backend(launcher)
    assert isinstance(backend, Backend)
    try:
        first = backend.reset(recording_dir / "arena.yaml", seed=0)
        assert first.image.shape == (RES, RES, 3) and first.image.dtype == np.uint8
        assert first.health == 100.0 and first.reward == 0.0 and not first.done
        moved = backend.step(1, 0)
        assert moved.info["velocity"][2] > 0  # forward, in the agent's own frame
        assert moved.health < 100.0 and moved.reward < 0
        assert np.array_equal(backend.frame(), moved.image)
        with pytest.raises(ValueError, match="0, 1 or 2"):
            backend.step(3, 0)
    finally:
        backend.close()
    assert backend.port is None


def test_reset_with_a_seed_always_builds_that_world(launcher, tmp_path):
    arena = _arena(tmp_path)
    backend = _backend(launcher)
    try:
        a = backend.reset(arena, seed=5)
        backend.step(1, 1)
        again = backend.reset(arena, seed=5)
        other = backend.reset(arena, seed=6)
        assert again.info["position"] == a.info["position"]
        assert np.array_equal(again.image, a.image)
        assert other.info["position"] != a.info["position"]
    finally:
        backend.close()


def test_reset_plays_the_first_arena_of_a_randomised_file(launcher, tmp_path):
    arenas = "".join(f"""
      {k}: !Arena
        timeLimit: 100
        items:
        - !Item
          name: Agent
          positions: [!Vector3 {{x: {5 + 5 * k}, y: 0, z: 5}}]
    """ for k in range(3))
    arena = _arena(tmp_path, "!ArenaConfig\nrandomizeArenas: true\narenas:" + arenas)
    backend = _backend(launcher)
    try:
        xs = {round(backend.reset(arena, seed=s).info["position"][0]) for s in range(4)}
        assert xs == {5}
    finally:
        backend.close()


def test_concurrent_backends_get_their_own_ports(launcher, recording_dir):
    base = _free_port()
    first, second = _backend(launcher, base_port=base), _backend(launcher, base_port=base)
    try:
        first.reset(recording_dir / "arena.yaml", seed=0)
        second.reset(recording_dir / "arena.yaml", seed=0)
        assert first.port != second.port
        assert first.step(1, 0).health == second.step(1, 0).health
    finally:
        first.close()
        second.close()


def test_busy_port_is_unity_unavailable_unless_the_id_is_free_to_choose(launcher, recording_dir):
    with socket.socket() as squatter:
        squatter.bind(("localhost", 0))
        squatter.listen()
        busy = squatter.getsockname()[1]
        with pytest.raises(UnityUnavailable, match=f"port {busy} is in use"):
            _backend(launcher, base_port=busy, worker_id=0).check()
        chosen = _backend(launcher, base_port=busy)
        try:
            chosen.reset(recording_dir / "arena.yaml", seed=0)
            assert chosen.port != busy
        finally:
            chosen.close()


def test_build_path_without_extension_as_mlagents_allows(launcher):
    bare = str(launcher)[: -len(".x86_64")]
    backend = _backend(bare)
    assert backend.file_name == str(launcher)
    backend.check()


def test_unrunnable_builds_are_unity_unavailable(tmp_path, monkeypatch):
    with pytest.raises(UnityUnavailable, match="no Animal-AI Unity build"):
        UnityBackend(tmp_path / "nowhere" / "AAI.x86_64")
    plain = tmp_path / "plain.x86_64"
    plain.write_text("#!/bin/sh\n")
    with pytest.raises(UnityUnavailable, match="not executable"):
        UnityBackend(plain)
    crash = tmp_path / "crash.x86_64"
    crash.write_text("#!/bin/sh\necho 'segfault, say' >&2\nexit 1\n")
    crash.chmod(0o755)
    with pytest.raises(UnityUnavailable, match="return code 1"):
        _backend(crash, timeout=10).check()
    # no build anywhere and downloads forbidden: animalai's search fails cleanly
    monkeypatch.delenv("LLM_AAI_UNITY_BUILD", raising=False)
    monkeypatch.setenv("ANIMALAI_AUTO_DOWNLOAD", "0")
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UnityUnavailable, match="found no Unity build"):
        UnityBackend(None, base_port=_free_port()).check()


def test_environment_variable_names_the_build(launcher, monkeypatch):
    monkeypatch.setenv("LLM_AAI_UNITY_BUILD", str(launcher))
    assert UnityBackend(resolution=RES).file_name == str(launcher)


def test_refusals_name_what_is_wrong(launcher, tmp_path):
    with pytest.raises(ValueError, match="no_graphics"):
        _backend(launcher, no_graphics=True)
    with pytest.raises(ValueError, match="sets these itself"):
        _backend(launcher, seed=3)
    with pytest.raises(ValueError, match=r"no argument\(s\) \['timescal'\]"):
        _backend(launcher, timescal=2)
    assert _backend(launcher, timescale=2) is not None  # a real AnimalAIEnvironment argument
    backend = _backend(launcher)
    with pytest.raises(FileNotFoundError):
        backend.reset(tmp_path / "missing.yaml", seed=0)
    with pytest.raises(ValueError, match="32-bit seed"):
        backend.reset(_arena(tmp_path), seed=2**31)
    two_agents = _arena(tmp_path, """
        !ArenaConfig
        arenas:
          0: !Arena
            items:
            - !Item
              name: Agent
            - !Item
              name: Agent
        """, "two.yml")
    with pytest.raises(ArenaError, match="multi-agent arenas are not supported"):
        backend.reset(two_agents, seed=0)
    with pytest.raises(RuntimeError, match="reset"):
        backend.step(0, 0)


def test_camera_layout_is_channels_first_as_mlagents_envs_aai_returns_it():
    chw = np.zeros((3, 4, 4), dtype=np.float32)
    chw[0] = 1.0
    assert camera_to_uint8(chw[None])[0, 0].tolist() == [255, 0, 0]
    assert camera_to_uint8(np.full((1, 4, 4), 0.5, np.float32)).shape == (4, 4, 3)
    with pytest.raises(ValueError, match=r"\(C, H, W\)"):
        camera_to_uint8(np.zeros((4, 4, 3), np.float32))


def _turns(run_dir: Path) -> dict[str, list[tuple[float, float]]]:
    found = {}
    for episode in sorted((run_dir / "episodes").iterdir()):
        lines = (episode / "turns.jsonl").read_text().splitlines()
        found[episode.name] = [(json.loads(line)["health"], json.loads(line)["reward"])
                               for line in lines]
    return found


@pytest.mark.slow
def test_run_with_the_unity_backend_finishes_exits_and_matches_embedded(
        launcher, testbed_dir, tmp_path):
    tasks = "01-04-03,01-06-02,01-21-01,01-23-01"
    common = [sys.executable, "-m", "llm_aai.run", "--model", "heuristic", "--tasks", tasks,
              "--resolution", "64", "--max-scripts", "3", "--arenas-dir", str(testbed_dir),
              "--out", str(tmp_path), "--no-progress", "--seed", "4"]
    env = {**os.environ, "LP_NUM_THREADS": "1"}
    unity = subprocess.run([*common, "--run-id", "unity", "--backend", "unity",
                            "--unity-build", str(launcher), "--concurrency", "4"],
                           capture_output=True, text=True, timeout=300, env=env)
    assert unity.returncode == 0, unity.stderr[-3000:]
    embedded = subprocess.run([*common, "--run-id", "embedded"], capture_output=True,
                              text=True, timeout=300, env=env)
    assert embedded.returncode == 0, embedded.stderr[-3000:]
    on_unity, on_embedded = _turns(tmp_path / "unity"), _turns(tmp_path / "embedded")
    assert len(on_unity) == 4 and on_unity.keys() == on_embedded.keys()
    for episode, turns in on_unity.items():
        assert len(turns) == len(on_embedded[episode]) >= 2, episode
        # the wire carries float32: health and reward agree to its precision
        np.testing.assert_allclose(turns, on_embedded[episode], atol=2e-4, err_msg=episode)


def test_run_reports_an_unrunnable_build_before_writing_anything(tmp_path, testbed_dir):
    result = subprocess.run(
        [sys.executable, "-m", "llm_aai.run", "--model", "heuristic", "--tasks", "01-04-03",
         "--backend", "unity", "--unity-build", str(tmp_path / "none" / "AAI.x86_64"),
         "--arenas-dir", str(testbed_dir), "--out", str(tmp_path / "results"), "--no-progress"],
        capture_output=True, text=True, timeout=120)
    assert result.returncode == 2
    assert "no Animal-AI Unity build" in result.stderr
    assert not (tmp_path / "results").exists()


def test_play_takes_the_unity_build(launcher, recording_dir):
    result = subprocess.run(
        [sys.executable, "-m", "llm_aai.play", str(recording_dir / "arena.yaml"),
         "--backend", "unity", "--unity-build", str(launcher), "--resolution", "64",
         "--script", "Go(3);"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    turns = [json.loads(line) for line in result.stdout.splitlines()]
    assert [t["turn"] for t in turns] == [0, 1]
    assert round(turns[1]["health"], 1) == 96.9  # the Unity recording's health after Go(3)


@pytest.mark.unity
@pytest.mark.skipif(
    not os.environ.get("LLM_AAI_UNITY_BUILD"),
    reason="set LLM_AAI_UNITY_BUILD to a Unity Animal-AI executable to run",
)
def test_real_unity_player_plays_the_recordings_first_script(recording_dir):
    """Needs the real player: the health after Go(3) matches the recording's table."""
    backend = UnityBackend(os.environ["LLM_AAI_UNITY_BUILD"], resolution=64)
    try:
        start = backend.reset(recording_dir / "arena.yaml", seed=0)
        assert start.image.shape == (64, 64, 3)
        last = start
        for _ in range(1 + 48):
            last = backend.step(0, 0)
        for _ in range(3):
            last = backend.step(1, 0)
        assert round(last.health, 1) == 96.9
    finally:
        backend.close()


STUCK_RESET = """
import os, sys
from pathlib import Path
from llm_aai.env.backends.unity import UnityBackend, UnityUnavailable
from tests.env.test_unity_backend import _ends_within
backend = UnityBackend(sys.argv[1], resolution=64, base_port=int(sys.argv[3]), timeout=4)
try:
    backend.reset(sys.argv[2], seed=0)
except UnityUnavailable as error:
    print("unavailable:", error, flush=True)
player = int(Path(os.environ["STUCK_PLAYER_PID_FILE"]).read_text())
print("player ended" if _ends_within(player, 10.0) else "player running", flush=True)
"""


def test_a_player_stuck_in_its_first_reset_is_stopped_at_once(tmp_path):
    """animalai's constructor resets the player; when that times out, the half-built
    environment (its gRPC server, the player process) is closed then, not at exit."""
    root = Path(__file__).resolve().parents[2]
    launcher = tmp_path / "stuck" / "AAI.x86_64"
    launcher.parent.mkdir()
    launcher.write_text(
        "#!/bin/sh\n"
        f"export PYTHONPATH={root}${{PYTHONPATH:+:$PYTHONPATH}}\n"
        f"exec {sys.executable} -m tests.env.stuck_reset_player \"$@\"\n", encoding="utf-8")
    launcher.chmod(0o755)
    pid_file = tmp_path / "player.pid"
    env = {**os.environ, "STUCK_PLAYER_PID_FILE": str(pid_file), "PYTHONPATH": str(root)}
    try:
        done = subprocess.run(
            [sys.executable, "-c", STUCK_RESET, str(launcher), str(_arena(tmp_path)),
             str(_free_port())], env=env, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr[-2000:]
        assert "unavailable:" in done.stdout and "UnityTimeOutException" in done.stdout
        assert "player ended" in done.stdout  # killed by the close (left, it sleeps 600 s)
    finally:
        with contextlib.suppress(FileNotFoundError, ProcessLookupError):
            os.kill(int(pid_file.read_text()), signal.SIGKILL)


def _ends_within(pid: int, seconds: float) -> bool:
    """Whether process ``pid`` is gone or a zombie (killed, not yet reaped) within ``seconds``."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except FileNotFoundError:
            return True
        if state == "Z":
            return True
        time.sleep(0.1)
    return False
