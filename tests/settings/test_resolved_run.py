"""A run's settings: stored once, read back typed from a manifest of any version."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import pytest

from llm_aai.logs import SchemaError, read_manifest
from llm_aai.protocol import PAPER_PROTOCOL
from llm_aai.protocol.modes import ModeSettings, mode_label
from llm_aai.settings import (
    ConfigError,
    ModelOptions,
    ResolvedRun,
    RunConfig,
    read_settings,
    settings_of,
)

DATA = Path(__file__).parents[1] / "logs" / "data"
VERSIONS = {1: DATA / "manifest-v1.json", 2: DATA / "manifest-v2.json",
            3: DATA / "manifest-v3.json"}
"""One command (``python -m llm_aai.run --model heuristic --tasks 01-04-03,01-06-02
--resolution 64 --max-scripts 1``) as each manifest version recorded it."""
GOLDEN_RUN = Path(__file__).parents[1] / "data" / "golden_run" / "heuristic-2-tasks"


def _read(tmp_path: Path, version: int) -> ResolvedRun:
    run_dir = tmp_path / f"v{version}"
    run_dir.mkdir()
    shutil.copy(VERSIONS[version], run_dir / "manifest.json")
    return read_settings(run_dir)


def test_one_command_reads_as_the_same_settings_in_every_manifest_version(tmp_path):
    read = {version: _read(tmp_path, version) for version in VERSIONS}
    assert read[1] == read[2] == read[3]
    assert read[3].config == RunConfig(
        model="heuristic", tasks="01-04-03,01-06-02", resolution=64,
        protocol=dataclasses.replace(PAPER_PROTOCOL, max_scripts=1),
        arenas_dir=Path("/data/animal-ai/testbed/competition"))
    assert read[3].tasks == ("01-04-03", "01-06-02") and read[3].cost_known
    assert mode_label(read[1].config.modes, read[1].config.protocol.max_scripts) == "paper"


def test_a_version_3_manifest_stores_the_settings_once(tmp_path):
    data = json.loads(VERSIONS[3].read_text())
    assert "config" not in data and "run_config" not in data and "cli_args" not in data
    assert set(data["run"]) == {"config", "tasks", "replay_seed", "price_per_mtok",
                                "cost_known", "variants"}
    run = _read(tmp_path, 3)
    written = data["run"]
    written["config"]["perspective"] = written["config"].pop("frame")  # renamed since (#34)
    written["config"]["model_options"].update(  # added since, at their defaults (#35)
        keep_last_turns=None, stop=[], sampling=[], fold_system_prompt=False)
    written["config"].update(executor="local", ray_address=None,  # added since (#36)
                             ray_episode_cpus=None)
    written["config"]["model_options"]["provider_rpm"] = None  # added since (#36)
    assert run.to_record() == written  # the record round-trips exactly, under today's names
    seeds = {}
    for episode in data["seeds"]["episodes"]:
        task_id, trial = episode.rsplit("_t", 1)
        seeds[episode] = run.seed_of(task_id, int(trial))
    assert seeds == data["seeds"]["episodes"]  # the seeds section follows from the settings


def test_the_golden_run_reads_typed(tmp_path):
    run = settings_of(read_manifest(GOLDEN_RUN))
    assert run.config.model == "heuristic" and run.config.resolution == 128
    assert run.config.frames.kind == "jpeg" and run.config.frames.quality == 75
    assert run.config.modes == ModeSettings() and run.config.physics_build == "3.x"
    assert run.tasks == ("01-04-03", "06-09-01")


@pytest.mark.parametrize("change, message", [
    (lambda run: run.update(trials=2), r"field 'run.trials': not a setting"),
    (lambda run: run["config"].update(trials="two"), r"field 'run.config.trials': Input"),
    (lambda run: run.update(cost_known="yes"), r"field 'run.cost_known': Input should be"),
    (lambda run: run.pop("tasks"), r"missing field 'run.tasks'"),
])
def test_a_bad_run_record_names_the_field(tmp_path, change, message):
    data = json.loads(VERSIONS[3].read_text())
    change(data["run"])
    (tmp_path / "manifest.json").write_text(json.dumps(data))
    with pytest.raises(SchemaError, match=message) as raised:
        read_settings(tmp_path)
    assert "manifest.json" in str(raised.value)


@pytest.mark.parametrize("version", sorted(VERSIONS))
def test_a_renamed_field_is_read_by_its_old_name_in_every_version(tmp_path, version):
    """``frame`` (the text's frame of reference) is ``perspective`` since issue 34."""
    data = json.loads(VERSIONS[version].read_text())
    where = {1: ("cli_args",), 2: ("run_config",), 3: ("run", "config")}[version]
    record = data
    for key in where:
        record = record[key]
    if version > 1:  # the v1 fixture's run predates the flag (its command line had no frame)
        assert record["frame"] == "egocentric"
    record["frame"] = "allocentric"
    (tmp_path / "manifest.json").write_text(json.dumps(data))
    assert read_settings(tmp_path).config.perspective == "allocentric"


def test_a_field_under_its_old_and_its_new_name_is_refused(tmp_path):
    data = json.loads(VERSIONS[3].read_text())
    data["run"]["config"]["perspective"] = "allocentric"
    (tmp_path / "manifest.json").write_text(json.dumps(data))
    with pytest.raises(SchemaError, match="'frame': the old name of 'perspective'"):
        read_settings(tmp_path)


def test_a_run_recorded_with_frame_control_reads_as_action_control(tmp_path):
    """``--control frame`` is ``--control action`` since issue 34: older runs read so."""
    data = json.loads(VERSIONS[3].read_text())
    data["run"]["config"]["modes"]["control"] = "frame"
    data["run"]["config"]["protocol"].update(max_scripts=None, max_replies=9)
    (tmp_path / "manifest.json").write_text(json.dumps(data))
    config = read_settings(tmp_path).config
    assert config.modes == ModeSettings(control="action")
    assert mode_label(config.modes, config.protocol.max_scripts) == "action control"


def test_a_library_caller_of_frame_control_gets_action_control_with_a_warning():
    with pytest.warns(DeprecationWarning, match="control='frame' is deprecated: use 'action'"):
        assert ModeSettings(control="frame") == ModeSettings(control="action")


def test_the_request_settings_of_a_local_server_round_trip_typed(tmp_path):
    """``--stop``, ``--sampling`` (each value keeps its kind) and ``--fold-system-prompt``
    are read back from the manifest as they were given (#35)."""
    options = ModelOptions(api_base="http://127.0.0.1:8080/v1", stop=("</s>", "\nUser:"),
                           sampling=(("top_p", 0.9), ("top_k", 40), ("cache_prompt", True),
                                     ("grammar", "root ::= [a-z]+")),
                           fold_system_prompt=True)
    config = RunConfig(model="openai/local", tasks="01-04-03", model_options=options)
    record = json.loads(json.dumps(config.to_record()))  # as the manifest stores it
    assert record["model_options"]["sampling"][1] == ["top_k", 40]
    again = RunConfig.from_record(record)
    assert again == config
    assert [type(value) for _, value in again.model_options.sampling] == [float, int, bool, str]
    assert options.extra_params == {"top_p": 0.9, "top_k": 40, "cache_prompt": True,
                                    "grammar": "root ::= [a-z]+", "stop": ["</s>", "\nUser:"]}


@pytest.mark.parametrize("sampling, message", [
    ([["top_p", {"a": 1}]], r"field 'run_config.model_options.sampling.0.1"),
    ([["top_p"]], r"field 'run_config.model_options.sampling.0"),
])
def test_a_bad_sampling_record_names_the_field(sampling, message):
    record = RunConfig(model="openai/local").to_record()
    record["model_options"]["sampling"] = sampling
    with pytest.raises(SchemaError, match=message):
        RunConfig.from_record(record)


@pytest.mark.parametrize("options, message", [
    ({"sampling": (("max_tokens", 3),)}, "sampling cannot set 'max_tokens'"),
    ({"sampling": (("top_p", float("nan")),)}, "a value is a finite number"),
    ({"sampling": (("top_p", 0.9), ("top_p", 0.8))}, "sets 'top_p' twice"),
    ({"stop": ("",)}, "stop takes non-empty text"),
])
def test_request_settings_no_server_can_use_are_refused(options, message):
    with pytest.raises(ConfigError, match=message):
        ModelOptions(**options)


def test_where_a_run_plays_round_trips_and_a_resume_may_move_it(tmp_path):
    from llm_aai.settings import ResumeOverrides

    on_ray = RunConfig(model="heuristic", executor="ray", ray_address="10.0.0.5:6379",
                       ray_episode_cpus=0.25)
    assert RunConfig.from_record(on_ray.to_record()) == on_ray
    assert ResumeOverrides(executor="local").apply(on_ray) == RunConfig(model="heuristic")
    assert ResumeOverrides(ray_episode_cpus=0.5).apply(on_ray).ray_episode_cpus == 0.5
    local = RunConfig(model="heuristic")
    assert ResumeOverrides(executor="ray", ray_address="auto").apply(local) == \
        dataclasses.replace(local, executor="ray", ray_address="auto")
    with pytest.raises(ConfigError, match="ray_address"):
        RunConfig(model="heuristic", ray_address="auto")  # an address needs executor ray
    with pytest.raises(ConfigError, match="executor"):
        RunConfig(model="heuristic", executor="slurm")
    with pytest.raises(ConfigError, match="ray_episode_cpus reserves a Ray cluster's CPUs"):
        RunConfig(model="heuristic", ray_episode_cpus=0.5)  # needs executor ray
    for refused in (0, -1.0, 0.00001, float("nan")):
        with pytest.raises(ConfigError, match="^ray_episode_cpus must be"):
            RunConfig(model="heuristic", executor="ray", ray_episode_cpus=refused)


def test_a_script_mode_that_is_no_reading_is_refused():
    """``script_mode="lenien"`` read every script strictly, without a word."""
    assert RunConfig(model="heuristic", script_mode="lenient").script_mode == "lenient"
    with pytest.raises(ConfigError, match="^script_mode must be one of strict, lenient, not"):
        RunConfig(model="heuristic", script_mode="lenien")
