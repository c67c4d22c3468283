"""``--resume`` takes a run's model endpoint, Ray cluster and Unity build only where it vouches.

A run folder from elsewhere is untrusted: a manifest naming ``--api-base`` of another host
would have a resume send the user's API key there. Each test makes a real run with the run
command, then resumes it as made, edited, copied or carried to another user's machine. A
listening socket stands for the attacker's host: a refused resume must not connect to it.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from llm_aai.cli.run import main as run_main
from llm_aai.llm.fake_server import FakeChatServer
from llm_aai.logs import RunStore
from llm_aai.runner import resume_run
from llm_aai.runner.routing import MARK, key_path
from llm_aai.settings import ResumeOverrides
from tests.helpers.runs import make_run

TASK = "01-04-03"
EPISODE = f"{TASK}_t1"


@pytest.fixture
def attacker() -> Iterator[socket.socket]:
    """A loopback port standing for the attacker's host; ``connected`` says if anyone came."""
    with socket.create_server(("127.0.0.1", 0)) as listener:
        listener.settimeout(0)
        yield listener


def connected(listener: socket.socket) -> bool:
    try:
        listener.accept()[0].close()
    except BlockingIOError:
        return False
    return True


def address(listener: socket.socket) -> str:
    host, port = listener.getsockname()
    return f"{host}:{port}"


@pytest.fixture
def server(monkeypatch) -> Iterator[FakeChatServer]:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-routing")
    with FakeChatServer(default="Go(3);") as fake:
        yield fake


def llm_run(testbed_dir: Path, out: Path, server: FakeChatServer, run_id: str = "r") -> Path:
    """A finished run of the fake model, its one episode then removed so a resume plays it."""
    run_dir = make_run(testbed_dir, out, run_id, "--model", "openai/fake", "--api-base",
                       server.url, "--tasks", TASK, "--max-scripts", "2")
    shutil.rmtree(run_dir / "episodes" / EPISODE)
    server.requests.clear()
    return run_dir


def edit_config(run_dir: Path, **changes) -> None:
    """Edit the manifest's recorded config, as a run folder from elsewhere could have it."""
    path = run_dir / "manifest.json"
    manifest = json.loads(path.read_text())
    config = manifest["run"]["config"]
    for dotted, value in changes.items():
        *parents, name = dotted.split("__")
        record = config
        for parent in parents:
            record = record[parent]
        record[name] = value
    path.write_text(json.dumps(manifest))


def resume(run_dir: Path, *flags: str) -> int:
    return run_main(["--resume", str(run_dir), "--no-progress", *flags])


def played(run_dir: Path) -> bool:
    return EPISODE in RunStore(run_dir).finished_results()


def refusal(capsys) -> str:
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1, lines
    return lines[0]


def test_a_run_made_here_resumes_on_its_recorded_endpoint(testbed_dir, tmp_path, server):
    run_dir = llm_run(testbed_dir, tmp_path, server)
    assert (run_dir / MARK).is_file()
    assert resume(run_dir) == 0
    assert played(run_dir) and server.requests


def test_an_edited_api_base_is_refused_before_any_request(testbed_dir, tmp_path, server,
                                                          attacker, capsys):
    run_dir = llm_run(testbed_dir, tmp_path, server)
    evil = f"http://{address(attacker)}/v1"
    edit_config(run_dir, model_options__api_base=evil)
    capsys.readouterr()
    assert resume(run_dir) == 2
    line = refusal(capsys)
    assert f"--api-base {evil}" in line and "does not match its manifest" in line
    assert not connected(attacker) and not server.requests and not played(run_dir)


def test_the_api_base_given_again_resumes(testbed_dir, tmp_path, server):
    run_dir = llm_run(testbed_dir, tmp_path, server)
    edit_config(run_dir, model_options__api_base="http://attacker.example/v1")
    assert resume(run_dir, "--api-base", server.url) == 0
    assert played(run_dir) and server.requests


def test_a_run_without_its_mark_is_refused_until_the_flag_is_given(testbed_dir, tmp_path,
                                                                   server, capsys):
    run_dir = llm_run(testbed_dir, tmp_path, server)
    (run_dir / MARK).unlink()
    capsys.readouterr()
    assert resume(run_dir) == 2
    line = refusal(capsys)
    assert f"--api-base {server.url}" in line and f"holds no {MARK}" in line
    assert not server.requests
    assert resume(run_dir, "--api-base", server.url) == 0 and played(run_dir)


def test_a_run_carried_to_another_users_machine_needs_the_flag(testbed_dir, tmp_path, server,
                                                              monkeypatch, capsys):
    run_dir = llm_run(testbed_dir, tmp_path, server)
    monkeypatch.setenv("LLM_AAI_CONFIG_DIR", str(tmp_path / "elsewhere"))  # no key there yet
    capsys.readouterr()
    assert resume(run_dir) == 2
    assert "there is no key to check" in refusal(capsys) and not server.requests
    # a key of this other user's own does not vouch for the mark either
    make_run(testbed_dir, tmp_path, "mine", "--model", "openai/fake", "--api-base",
             server.url, "--tasks", TASK, "--max-scripts", "2")
    server.requests.clear()
    capsys.readouterr()
    assert resume(run_dir) == 2
    assert "does not match" in refusal(capsys) and not server.requests
    assert resume(run_dir, "--api-base", server.url) == 0 and played(run_dir)


def test_a_mark_copied_onto_another_run_vouches_for_nothing(testbed_dir, tmp_path, server,
                                                          attacker, capsys):
    mine = llm_run(testbed_dir, tmp_path, server, "mine")
    foreign = llm_run(testbed_dir, tmp_path, server, "foreign")
    edit_config(foreign, model_options__api_base=f"http://{address(attacker)}/v1")
    shutil.copy(mine / MARK, foreign / MARK)
    capsys.readouterr()
    assert resume(foreign) == 2
    assert "does not match" in refusal(capsys) and not connected(attacker)


@pytest.mark.parametrize("planted", ["symlink", "fifo", "huge"])
def test_a_planted_mark_file_is_no_mark(testbed_dir, tmp_path, server, planted, capsys):
    run_dir = llm_run(testbed_dir, tmp_path, server)
    good = (run_dir / MARK).read_text()
    (run_dir / MARK).unlink()
    if planted == "symlink":  # even to the right text: the folder cannot point elsewhere
        (tmp_path / "elsewhere.hmac").write_text(good)
        (run_dir / MARK).symlink_to(tmp_path / "elsewhere.hmac")
    elif planted == "fifo":  # nobody writes it: a reader that opened it would wait forever
        os.mkfifo(run_dir / MARK)
    else:
        (run_dir / MARK).write_text(good * 1000)
    capsys.readouterr()
    assert resume(run_dir) == 2
    assert f"holds no {MARK}" in refusal(capsys) and not server.requests


def test_a_run_without_routing_settings_resumes_without_flags(testbed_dir, tmp_path):
    run_dir = make_run(testbed_dir, tmp_path, "h", "--model", "heuristic", "--tasks", TASK,
                       "--max-scripts", "2")
    assert not (run_dir / MARK).exists()
    shutil.rmtree(run_dir / "episodes" / EPISODE)
    assert resume(run_dir) == 0 and played(run_dir)


def test_a_unity_build_planted_in_a_manifest_is_not_started(testbed_dir, tmp_path, capsys):
    run_dir = make_run(testbed_dir, tmp_path, "h", "--model", "heuristic", "--tasks", TASK,
                       "--max-scripts", "2")
    shutil.rmtree(run_dir / "episodes" / EPISODE)
    ran = tmp_path / "the-build-ran"
    build = tmp_path / "AAI.x86_64"
    build.write_text(f"#!/bin/sh\ntouch {ran}\n")
    build.chmod(0o755)
    edit_config(run_dir, backend="unity", unity_build=str(build))
    capsys.readouterr()
    assert resume(run_dir) == 2
    line = refusal(capsys)
    assert f"--unity-build {build}" in line and f"holds no {MARK}" in line
    assert not ran.exists() and not played(run_dir)


def test_a_ray_address_planted_in_a_manifest_is_not_joined(testbed_dir, tmp_path, attacker,
                                                           capsys):
    run_dir = make_run(testbed_dir, tmp_path, "h", "--model", "heuristic", "--tasks", TASK,
                       "--max-scripts", "2")
    shutil.rmtree(run_dir / "episodes" / EPISODE)
    edit_config(run_dir, executor="ray", ray_address=address(attacker))
    capsys.readouterr()
    assert resume(run_dir) == 2
    assert f"--ray-address {address(attacker)}" in refusal(capsys)
    assert not connected(attacker) and not played(run_dir)
    # moved off the cluster (a library call: docs/ray.md), it uses no recorded address
    resume_run(run_dir, ResumeOverrides(executor="local"), show_progress=False)
    assert played(run_dir) and not connected(attacker)


def test_every_unvouched_setting_is_named(testbed_dir, tmp_path, server, attacker, capsys):
    run_dir = llm_run(testbed_dir, tmp_path, server)
    edit_config(run_dir, backend="unity", unity_build="/opt/evil/AAI.x86_64",
                executor="ray", ray_address=address(attacker),
                model_options__api_base="http://attacker.example/v1")
    capsys.readouterr()
    assert resume(run_dir) == 2
    line = refusal(capsys)
    for named in ("--api-base http://attacker.example/v1", "--unity-build /opt/evil/AAI.x86_64",
                  f"--ray-address {address(attacker)}"):
        assert named in line
    # given one of them again, the others are still refused
    assert resume(run_dir, "--api-base", server.url) == 2
    line = refusal(capsys)
    assert "--api-base" not in line.split("names")[1].split("which")[0]
    assert "--unity-build /opt/evil/AAI.x86_64" in line and not server.requests


def test_a_value_with_control_characters_is_shown_escaped(testbed_dir, tmp_path, server,
                                                          capsys):
    run_dir = llm_run(testbed_dir, tmp_path, server)
    edit_config(run_dir, model_options__api_base="http://a.example/v1\x1b[2K\rok")
    capsys.readouterr()
    assert resume(run_dir) == 2
    line = refusal(capsys)
    assert "\x1b" not in line and "\\x1b[2K\\rok" in line


def test_the_key_is_made_private_and_one_others_could_read_is_refused(
        testbed_dir, tmp_path, server, monkeypatch, capsys):
    monkeypatch.setenv("LLM_AAI_CONFIG_DIR", str(tmp_path / "config" / "llm-aai"))
    first = llm_run(testbed_dir, tmp_path, server, "first")
    key = key_path()
    assert key.parent.parent == tmp_path / "config"
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    assert stat.S_IMODE(key.parent.stat().st_mode) == 0o700
    key.chmod(0o644)
    capsys.readouterr()
    # a key others could have read or replaced vouches for no run, even one made with it
    assert resume(first) == 2
    assert "could be read or replaced by other users" in refusal(capsys)
    assert not server.requests
    # and a run made meanwhile is made without a mark, which it says
    second = llm_run(testbed_dir, tmp_path, server, "second")
    warning = capsys.readouterr().err
    assert "could be read or replaced by other users" in warning
    assert f"will need --api-base {server.url} given again" in warning
    assert not (second / MARK).exists()
