import json
import shutil

import pytest

from llm_aai.analysis import RunDirectoryError, load_runs
from llm_aai.logs.schema import SUMMARY_COLUMNS


def test_episodes_one_row_per_sealed_episode(two_models):
    runs = load_runs(two_models)
    episodes = runs.episodes
    assert len(episodes) == 119 + 120  # alpha's 10-22-03 trial 3 never finished
    assert set(SUMMARY_COLUMNS) <= set(episodes.columns)
    assert {"run_id", "model", "prompt", "backend", "agent_name", "litellm_model", "label",
            "level_name", "infra_failure", "episode_dir"} <= set(episodes.columns)
    alpha = episodes[episodes["model"] == "alpha"]
    assert alpha["run_id"].unique().tolist() == ["run-alpha-react-1"]
    assert alpha["litellm_model"].unique().tolist() == ["provider/alpha"]
    assert alpha["infra_failure"].sum() == 2
    assert sorted(alpha.loc[alpha["infra_failure"], "episode_id"]) == ["05-09-01_t2",
                                                                        "05-24-01_t3"]
    assert "10-22-03_t3" not in set(alpha["episode_id"])
    assert episodes.loc[episodes["task_id"] == "08-03-03", "level_name"].iloc[0] == \
        "Object Permanence and Working Memory"


def test_runs_table_counts_unfinished_and_set_aside(two_models):
    runs = load_runs(two_models, with_turns=False).runs.set_index("model")
    assert runs.loc["alpha", "finished"] == 119
    assert runs.loc["alpha", "unfinished"] == 1
    assert runs.loc["alpha", "set_aside_attempts"] == 2
    assert runs.loc["beta", ["finished", "unfinished", "set_aside_attempts"]].tolist() == \
        [120, 0, 0]


def test_turns_one_row_per_turn_record(two_models):
    turns = load_runs(two_models).turns
    # 5 scripts + closing turn per agent episode; 1 script and no closing turn when lost
    assert len(turns) == (117 * 6 + 2 * 1) + 120 * 6
    beta = turns[turns["run_id"] == "run-beta-react-1"]
    invalid = beta[beta["invalid"]]
    assert len(invalid) == 12 * 2  # level 4: 4 tasks x 3 trials x 2 bad replies
    assert invalid["episode_id"].str.startswith("04-").all()
    assert invalid["parse_error"].notna().all()
    assert beta["reply"].isna().sum() == 120  # the closing turns
    first = beta[(beta["episode_id"] == "01-04-03_t1") & (beta["turn"] == 1)].iloc[0]
    assert first["n_commands"] == 2 and first["n_images"] == 3
    assert first["input_tokens"] == 900 and first["latency_s"] == 1.5


def test_without_turns_is_empty(two_models):
    assert load_runs(two_models, with_turns=False).turns.empty


def test_not_a_run_directory(tmp_path):
    with pytest.raises(RunDirectoryError, match="not an llm-aai run directory"):
        load_runs([tmp_path])
    with pytest.raises(RunDirectoryError, match="no such directory"):
        load_runs([tmp_path / "missing"])
    with pytest.raises(RunDirectoryError, match="no run directories"):
        load_runs([])


def test_malformed_manifest_names_file_and_field(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    (run / "manifest.json").write_text("{not json")
    with pytest.raises(RunDirectoryError, match=r"manifest.json: unreadable manifest"):
        load_runs([run])
    (run / "manifest.json").write_text(json.dumps({"run_id": "x", "config": {"prompt": "r"}}))
    with pytest.raises(RunDirectoryError, match=r"manifest.json: .*'config.model'"):
        load_runs([run])


def test_malformed_result_names_the_file(tmp_path, make_run):
    run = make_run(tmp_path, model="m", levels=range(1, 2), trials=range(1, 2))
    bad = run / "episodes" / "01-04-03_t1" / "result.json"
    bad.write_text(json.dumps({**json.loads(bad.read_text()), "schema": 99}))
    with pytest.raises(RunDirectoryError, match=r"01-04-03_t1/result.json.*schema 99"):
        load_runs([run])


@pytest.mark.parametrize(("field", "value", "expected"), [
    ("passed", "false", "a boolean, got a string"),  # a non-empty string would count as a pass
    ("reward", "-1.0", "a number, got a string"),
    ("steps", 2.5, "an integer, got a number"),
    ("cost_usd", "free", "a number or null, got a string"),
])
def test_a_result_field_of_the_wrong_kind_names_the_file_and_the_field(
        tmp_path, make_run, field, value, expected):
    run = make_run(tmp_path, model="m", levels=range(1, 2), trials=range(1, 2))
    bad = run / "episodes" / "01-04-03_t1" / "result.json"
    bad.write_text(json.dumps({**json.loads(bad.read_text()), field: value}))
    with pytest.raises(RunDirectoryError,
                       match=rf"01-04-03_t1/result.json.*field '{field}': expected {expected}"):
        load_runs([run])


def test_same_model_two_prompts_gets_two_labels(tmp_path, make_run):
    a = make_run(tmp_path, model="m", prompt="react", levels=range(1, 2))
    b = make_run(tmp_path, model="m", prompt="icl", levels=range(1, 2))
    c = make_run(tmp_path, model="other", prompt="icl", levels=range(1, 2))
    labels = load_runs([a, b, c], with_turns=False).episodes["label"].unique().tolist()
    assert labels == ["m [react]", "m [icl]", "other"]


def test_same_directory_twice_counts_each_episode_once(tmp_path, make_run, monkeypatch):
    run = make_run(tmp_path, model="m", levels=range(1, 3))
    once = load_runs([run])
    monkeypatch.chdir(tmp_path)
    twice = load_runs([run, f"{run}/", run.name, f"./{run.name}/"])
    assert len(twice.episodes) == len(once.episodes) == 8 * 3
    assert len(twice.turns) == len(once.turns)
    assert len(twice.runs) == 1 and twice.runs["duplicates"].tolist() == [0]


def test_copy_of_a_run_counts_each_episode_once(tmp_path, make_run):
    run = make_run(tmp_path / "a", model="m", levels=range(1, 3))
    copy = shutil.copytree(run, tmp_path / "b" / run.name)
    runs = load_runs([run, copy])
    assert len(runs.episodes) == 8 * 3
    assert not runs.episodes.duplicated(["run_id", "episode_id"]).any()
    assert runs.runs[["finished", "duplicates"]].values.tolist() == [[24, 0], [0, 24]]


def test_same_run_id_with_disjoint_episodes_is_pooled(tmp_path, make_run):
    first = make_run(tmp_path / "a", model="m", run_id="split", levels=range(1, 2))
    second = make_run(tmp_path / "b", model="m", run_id="split", levels=range(2, 3))
    assert len(load_runs([first, second]).episodes) == 8 * 3


def test_same_episode_with_different_results_is_refused(tmp_path, make_run):
    run = make_run(tmp_path / "a", model="m", levels=range(1, 2), trials=range(1, 2))
    copy = shutil.copytree(run, tmp_path / "b" / run.name)
    result = copy / "episodes" / "01-04-03_t1" / "result.json"
    result.write_text(json.dumps({**json.loads(result.read_text()), "passed": True}))
    with pytest.raises(RunDirectoryError, match=r"episode '01-04-03_t1' appears in .*/a/.* and "
                                                r".*/b/.* with different results"):
        load_runs([run, copy])
