"""The run library without a command line: start_run / resume_run on typed configs.

Also the defaults' single home: every flag of ``python -m llm_aai.run`` defaults to the config
field it sets, and the model client defaults to the same values.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import json
import shutil
from pathlib import Path

import pytest

from llm_aai.cli.run import build_parser
from llm_aai.llm.client import LiteLLMClient
from llm_aai.llm.fake_server import FakeChatServer
from llm_aai.logs import RunStore, SchemaError, read_manifest
from llm_aai.logs.schema import manifest_from_dict
from llm_aai.prompts import load_prompt
from llm_aai.protocol import PAPER_PROTOCOL
from llm_aai.runner import (
    RESULTS_DIR,
    ModelOptions,
    ResumeOverrides,
    RunConfig,
    RunError,
    resume_run,
    run_config_of,
    start_run,
)
from llm_aai.settings import read_settings, settings_of

V1_MANIFEST = Path(__file__).parents[1] / "logs" / "data" / "manifest-v1.json"
V2_MANIFEST = V1_MANIFEST.with_name("manifest-v2.json")
COMMAND_ONLY = {"out", "run_id", "resume", "no_progress", "dry_run"}
"""Flags that are not settings of a run: where it goes, which run to resume, the display, and
the dry run (which plans one)."""


def test_every_flag_defaults_to_the_config_field_it_sets():
    parser = build_parser()
    defaults = RunConfig(model="m")
    dests = {action.dest for action in parser._actions if action.dest != "help"}
    settings = dests - COMMAND_ONLY
    assert settings <= set(RunConfig.field_paths())  # a new flag must set a config field
    for path in settings - {"model"}:
        assert parser.get_default(path) == defaults.value_of(path), path
    assert parser.get_default("out") == RESULTS_DIR


def test_the_model_options_default_to_the_model_clients():
    signature = inspect.signature(LiteLLMClient)
    options = ModelOptions()
    for name in ("temperature", "max_tokens", "timeout_s", "max_retries"):
        assert signature.parameters[name].default == getattr(options, name), name


def _model_config(testbed_dir: Path, url: str, **changes) -> RunConfig:
    return RunConfig(model="openai/fake", tasks="01-04-03", arenas_dir=testbed_dir,
                     resolution=64, protocol=dataclasses.replace(PAPER_PROTOCOL, max_scripts=1),
                     model_options=ModelOptions(api_base=url, max_tokens=256), **changes)


def test_start_and_resume_a_run_without_a_command_line(testbed_dir, tmp_path):
    with FakeChatServer(default="Go(3);") as server:
        url = server.url
        config = _model_config(testbed_dir, url, trials=2)
        outcome = start_run(config, out=tmp_path, run_id="r", show_progress=False)
    assert outcome.run_dir == tmp_path / "r"
    assert sorted(r.episode_id for r in outcome.results) == ["01-04-03_t1", "01-04-03_t2"]
    manifest = read_manifest(outcome.run_dir)
    assert manifest.manifest_version == 3 and manifest.cli_args is None
    assert manifest.config is None and manifest.run_config is None  # stored once, in run
    # the manifest names the arenas folder resolved (a symlinked ../shared included)
    started = dataclasses.replace(config, arenas_dir=testbed_dir.resolve())
    assert run_config_of(outcome.run_dir) == started == read_settings(outcome.run_dir).config
    # the options the agent was built with, recorded once, in the agent's description
    options = manifest.agent["options"]
    assert options["api_base"] == url and options["max_tokens"] == 256
    assert options["max_retries"] == 6 and options["temperature"] == 0.0

    shutil.rmtree(outcome.run_dir / "episodes" / "01-04-03_t2")
    with FakeChatServer(default="Turn(6);") as moved:
        resumed = resume_run(outcome.run_dir, ResumeOverrides(api_base=moved.url),
                             show_progress=False)
        assert len(moved.requests) == 1  # the override reached the agent
    assert [r.episode_id for r in resumed.results] == ["01-04-03_t2"]
    assert read_manifest(outcome.run_dir) == manifest  # resuming never rewrites it


def test_resume_refuses_what_is_not_a_run(tmp_path):
    with pytest.raises(RunError, match="not an llm-aai run directory"):
        resume_run(tmp_path)
    (tmp_path / "manifest.json").write_text(json.dumps({
        "manifest_version": 2, "config": {"model": "m", "prompt": "react"},
        "run_config": {"model": "m", "trials": "two"}}))
    with pytest.raises(RunError, match=r"manifest.json: field 'run_config.trials': "
                                       r"Input should be a valid integer"):
        resume_run(tmp_path)
    (tmp_path / "manifest.json").write_text(json.dumps({
        "manifest_version": 3, "run": {"config": {"model": "m", "prompt": "react",
                                                  "trials": "two"}, "tasks": []}}))
    with pytest.raises(RunError, match=r"manifest.json: field 'run.config.trials': "
                                       r"Input should be a valid integer"):
        resume_run(tmp_path)


def _old_run(tmp_path: Path, fixture: Path = V1_MANIFEST) -> Path:
    """A run directory as an earlier version left it: its manifest, no episode finished.

    The prompt record is brought up to date so that an edit of the package's prompt, which a
    resume rightly refuses, does not fail this test of the manifest's format.
    """
    run_dir = tmp_path / fixture.stem
    run_dir.mkdir()
    manifest = json.loads(fixture.read_text())
    manifest["prompt"] = load_prompt("react").manifest()
    (run_dir / "manifest.json").write_text(json.dumps(manifest))
    return run_dir


@pytest.mark.parametrize("fixture", [V1_MANIFEST, V2_MANIFEST])
def test_a_run_started_by_an_earlier_version_resumes(testbed_dir, tmp_path, fixture):
    run_dir = _old_run(tmp_path, fixture)
    assert run_config_of(run_dir) == RunConfig(
        model="heuristic", tasks="01-04-03,01-06-02", resolution=64,
        protocol=dataclasses.replace(PAPER_PROTOCOL, max_scripts=1),
        arenas_dir=Path("/data/animal-ai/testbed/competition"))
    resumed = resume_run(run_dir, ResumeOverrides(arenas_dir=testbed_dir), show_progress=False)
    assert sorted(r.episode_id for r in resumed.results) == ["01-04-03_t1", "01-06-02_t1"]
    assert set(RunStore(run_dir).finished_results()) == {"01-04-03_t1", "01-06-02_t1"}


def test_previous_version_command_lines_convert_field_by_field():
    cli_args = json.loads(V1_MANIFEST.read_text())["cli_args"]
    del cli_args["frames"], cli_args["jpeg_quality"]  # runs from before the choice: PNG frames
    manifest = manifest_from_dict({"config": {"model": "heuristic", "prompt": "react"},
                                   "cli_args": cli_args})
    config = settings_of(manifest).config
    assert (config.frames.kind, config.frames.quality) == ("png", 75)
    assert config.model_options.timeout_s == 120.0 and config.relaunch_delay_s == 5.0
    assert config.stop_after_failed_episodes == 3

    cli_args["shiny_new_flag"] = 1
    with pytest.raises(SchemaError, match=r"field 'cli_args.shiny_new_flag'"):
        settings_of(manifest_from_dict({"config": {"model": "h", "prompt": "react"},
                                        "cli_args": cli_args}))


@pytest.mark.parametrize("record, message", [
    ({"model": "m", "trialz": 2}, r"field 'run_config.trialz': not a setting"),
    ({"model": "m", "protocol": {"max_script": 2}}, r"field 'run_config.protocol.max_script'"),
    ({"model": "m", "frames": {"kind": "gif"}}, r"field 'run_config.frames': .*got 'gif'"),
    ({"trials": 2}, r"field 'run_config.model': Field required"),
])
def test_a_bad_config_record_names_the_field(record, message):
    with pytest.raises(SchemaError, match=message):
        RunConfig.from_record(record)


def test_the_run_library_never_imports_the_command_line():
    runner = Path(__file__).parents[2] / "llm_aai" / "runner"
    for module in runner.glob("*.py"):
        for node in ast.walk(ast.parse(module.read_text(), str(module))):
            names = ([alias.name for alias in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            assert not any(name.startswith(("llm_aai.cli", "argparse")) for name in names), module


def _one_episode(testbed_dir) -> RunConfig:
    return RunConfig(model="heuristic", tasks="01-04-03", arenas_dir=testbed_dir, resolution=64,
                     protocol=dataclasses.replace(PAPER_PROTOCOL, max_scripts=1))


@pytest.mark.parametrize("interrupted", ["_git_revision", "write_manifest"])
def test_an_interrupted_start_leaves_no_run_folder_and_starts_again(testbed_dir, tmp_path,
                                                                    monkeypatch, interrupted):
    """Ctrl-C while git runs (16-24 ms) or the manifest is written: the same command works."""
    from llm_aai.runner import manifest

    def interrupt(*args, **kwargs):
        raise KeyboardInterrupt

    target = manifest if interrupted == "_git_revision" else RunStore
    monkeypatch.setattr(target, interrupted, interrupt)
    with pytest.raises(KeyboardInterrupt):
        start_run(_one_episode(testbed_dir), out=tmp_path, run_id="r", show_progress=False)
    assert not (tmp_path / "r").exists()
    assert [p.name for p in tmp_path.iterdir()] == []  # no half-made folder either

    monkeypatch.undo()
    outcome = start_run(_one_episode(testbed_dir), out=tmp_path, run_id="r", show_progress=False)
    assert [r.episode_id for r in outcome.results] == ["01-04-03_t1"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r"]


def test_a_folder_holding_only_a_lock_is_started_again_and_resume_says_so(testbed_dir,
                                                                          tmp_path):
    """What an interrupted start left before runs were created in one step."""
    run_dir = tmp_path / "r"
    run_dir.mkdir()
    (run_dir / ".lock").write_text("")
    with pytest.raises(RunError, match=r"holds only the \.lock of a start interrupted .* start "
                                       "the run again with the same command"):
        resume_run(run_dir, show_progress=False)
    outcome = start_run(_one_episode(testbed_dir), out=tmp_path, run_id="r", show_progress=False)
    assert outcome.run_dir == run_dir and len(outcome.results) == 1
    assert read_manifest(run_dir).run_id == "r"
