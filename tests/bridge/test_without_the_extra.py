"""The bridge after ``make demo`` alone: one line naming the step that installs what it needs."""

from __future__ import annotations

from tests.helpers.readme import guarded_env, run_command


def test_the_bridge_without_protobuf_names_make_animalai(tmp_path, testbed_dir):
    env = guarded_env("demo", tmp_path / "guard.json", testbed_dir)
    status, output = run_command("python -m llm_aai.bridge install ./env", env, tmp_path)
    assert status == 1
    assert output.startswith("error: the bridge needs grpcio and protobuf (No module named "
                             "'google'"), output
    assert "run `make animalai`" in output and "Traceback" not in output
    assert not (tmp_path / "env").exists()


def test_with_the_extra_the_guard_lets_it_install(tmp_path, testbed_dir):
    env = guarded_env("animalai", tmp_path / "guard.json", testbed_dir)
    status, output = run_command("python -m llm_aai.bridge install ./env", env, tmp_path)
    assert status == 0, output
    assert (tmp_path / "env" / "AAI.x86_64").exists()
