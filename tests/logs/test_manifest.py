"""The run manifest: one typed record, one reader, old manifests still read, clear errors."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from llm_aai.arena import checksums, file_sha256
from llm_aai.logs import (
    MANIFEST_VERSION,
    RunManifest,
    RunStore,
    SchemaError,
    read_manifest,
)
from llm_aai.logs.schema import manifest_from_dict

V1_MANIFEST = Path(__file__).parent / "data" / "manifest-v1.json"
"""A manifest written by the version before RunManifest (``python -m llm_aai.run --model
heuristic --tasks 01-04-03,01-06-02 --resolution 64 --max-scripts 1``): it stored the command
line as ``cli_args`` and had no ``manifest_version``."""
V2_MANIFEST = Path(__file__).parent / "data" / "manifest-v2.json"
"""A version 2 manifest, written by the same command before the settings were stored once: it
holds the run's config twice, as started (``run_config``) and as resolved (``config``)."""


def _manifest(**changes) -> RunManifest:
    fields = dict(
        run_id="r", created="2026-11-24T08:00:00+00:00",
        run={"config": {"model": "heuristic", "prompt": "react", "tasks": "01-04-03",
                        "arenas_dir": "/data/arenas", "resolution": 64,
                        "protocol": {"max_scripts": 2}},
             "tasks": ["01-04-03"]},
        agent={"name": "heuristic", "kind": "builtin", "options": {}},
        prompt={"name": "react", "sha256": "ab" * 32},
        seeds={"run": 0, "episodes": {"01-04-03_t1": 1234}},
        arenas={"01-04-03": "cd" * 32},
        versions={"llm-aai": "0.1.0"}, git=None, host={"python": "3.11"})
    fields.update(changes)
    return RunManifest(**fields)


def test_a_manifest_survives_the_round_trip_through_its_file(tmp_path):
    manifest = _manifest()
    assert manifest_from_dict(manifest.to_dict()) == manifest
    RunStore(tmp_path).write_manifest(manifest)
    read = read_manifest(tmp_path)
    assert read == manifest and read.manifest_version == MANIFEST_VERSION
    assert json.loads((tmp_path / "manifest.json").read_text())["manifest_version"] == 3
    assert read.model == "heuristic" and read.prompt_name == "react"
    assert read.agent_name == "heuristic" and read.arenas_dir == "/data/arenas"
    assert read.episode_seeds == {"01-04-03_t1": 1234}
    assert read.arena_sha256("01-04-03") == "cd" * 32 and read.arena_sha256("09-09-09") is None
    assert read.arenas_found_in is None and "arenas_location" not in read.to_dict()


def test_where_the_run_found_its_arenas_is_kept():
    location = {"folder": "/data/testbed", "source": "env:LLM_AAI_ARENAS"}
    manifest = _manifest(arenas_location=location)
    assert manifest_from_dict(manifest.to_dict()) == manifest
    assert manifest.arenas_found_in == ("/data/testbed", "env:LLM_AAI_ARENAS")


def test_a_manifest_written_by_the_previous_version_is_read(tmp_path):
    shutil.copy(V1_MANIFEST, tmp_path / "manifest.json")
    manifest = read_manifest(tmp_path)
    assert manifest.manifest_version == 1 and manifest.run_config is None
    assert manifest.cli_args["max_scripts"] == 1
    assert manifest.model == "heuristic" and manifest.prompt_name == "react"
    assert manifest.arenas_dir == manifest.cli_args["arenas_dir"]
    assert sorted(manifest.episode_seeds) == ["01-04-03_t1", "01-06-02_t1"]
    # its checksums are the testbed's, computed by the one checksum function
    assert manifest.arena_sha256("01-04-03") == checksums()["01-04-03.yaml"]
    assert manifest.to_dict() == {**json.loads(V1_MANIFEST.read_text()), "manifest_version": 1}


def test_the_checksum_is_the_testbed_catalogs(testbed_dir):
    assert file_sha256(testbed_dir / "01-06-02.yaml") == checksums()["01-06-02.yaml"]


def _v1() -> dict:
    return json.loads(V1_MANIFEST.read_text())


@pytest.mark.parametrize("text, message", [
    ("{not json", r"manifest.json: unreadable manifest"),
    ("[1, 2]", r"manifest.json: manifest: expected a JSON object, got an array"),
    (json.dumps({"run_id": "x"}), r"manifest.json: missing field 'config'"),
    (json.dumps({"config": {"prompt": "r"}}), r"manifest.json: missing field 'config.model'"),
    (json.dumps({"config": {"model": 3, "prompt": "r"}}),
     r"manifest.json: field 'config.model': expected a string, got a number"),
    (json.dumps({**_v1(), "arenas": {"01-04-03": None}}),
     r"field 'arenas.01-04-03': expected a string, got null"),
    (json.dumps({**_v1(), "seeds": {"run": 0, "episodes": {"01-04-03_t1": "7"}}}),
     r"field 'seeds.episodes.01-04-03_t1': expected an integer, got a string"),
    (json.dumps({**_v1(), "config": {**_v1()["config"], "trials": True}}),
     r"field 'config.trials': expected an integer, got a boolean"),
    (json.dumps({**_v1(), "manifest_version": 4}),
     r"manifest_version 4; this llm-aai reads 1 to 3"),
    (json.dumps({"manifest_version": 3}), r"manifest.json: missing field 'run'"),
    (json.dumps({"manifest_version": 3, "run": {"config": {"model": "m", "prompt": "r"}}}),
     r"manifest.json: missing field 'run.tasks'"),
    (json.dumps({"manifest_version": 3, "run": {"config": {"model": "m", "prompt": "r"},
                                                "tasks": [1]}}),
     r"field 'run.tasks\[0\]': expected a string, got a number"),
    (json.dumps({**_v1(), "schema_version": 2}), r"schema_version 2; this llm-aai reads 1"),
    (json.dumps({**_v1(), "manifest_version": 2}), r"field 'run_config': missing"),
    (json.dumps({**_v1(), "notes": "mine"}), r"unknown field 'notes'"),
    (json.dumps({**_v1(), "arenas_location": {"source": "cache"}}),
     r"missing field 'arenas_location.folder'"),
    (json.dumps({**_v1(), "arenas_location": {"folder": 3, "source": "cache"}}),
     r"field 'arenas_location.folder': expected a string, got a number"),
    (json.dumps({**_v1(), "arenas_location": "/data"}),
     r"field 'arenas_location': expected an object, got a string"),
])
def test_a_bad_manifest_is_a_schema_error_naming_the_file_and_the_field(tmp_path, text, message):
    (tmp_path / "manifest.json").write_text(text)
    with pytest.raises(SchemaError, match=message) as raised:
        read_manifest(tmp_path)
    assert str(raised.value).startswith(str(tmp_path / "manifest.json"))


def test_no_manifest_says_this_is_not_a_run_directory(tmp_path):
    with pytest.raises(FileNotFoundError, match="not an llm-aai run directory"):
        read_manifest(tmp_path)


def test_a_version_2_manifest_is_read(tmp_path):
    shutil.copy(V2_MANIFEST, tmp_path / "manifest.json")
    manifest = read_manifest(tmp_path)
    assert manifest.manifest_version == 2 and manifest.cli_args is None
    assert manifest.model == "heuristic" and manifest.prompt_name == "react"
    assert manifest.arenas_dir == "/data/animal-ai/testbed/competition"
    assert manifest.episode_seeds == {"01-04-03_t1": 3468897627, "01-06-02_t1": 2558814109}
