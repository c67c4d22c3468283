import json
import os
import stat

import numpy as np
import pytest

from llm_aai.frames import FrameFormat, read_frame
from llm_aai.logs import EpisodeResult, RunStore, SchemaError, TurnRecord, Usage, read_turns
from llm_aai.logs.store import read_result, read_turns_until_cut


def _result(eid="01-04-03_t1", passed=True, reward=1.5):
    return EpisodeResult(episode_id=eid, task_id=eid.split("_")[0], level=1, trial=1, seed=7,
                         agent="heuristic", passed=passed, reward=reward, pass_mark=0.0,
                         final_health=80.0, scripts_used=3, invalid_replies=1,
                         end_reason="good_goal", steps=120)


@pytest.mark.parametrize("frame_format", [FrameFormat("png"), FrameFormat("jpeg", 80)],
                         ids=["png", "jpeg"])
def test_turns_round_trip_through_jsonl_with_frames(tmp_path, frame_format):
    store = RunStore(tmp_path / "run", frame_format)
    writer = store.start_episode("01-04-03_t1")
    frame = np.zeros((8, 8, 3), np.uint8)
    frame[2, 3] = (255, 10, 20)
    path = writer.save_frame(1, 0, frame)
    assert path == f"frames/turn-001-0{frame_format.suffix}"
    record = TurnRecord(turn=1, sent_text="Observation captured.", sent_images=(path,),
                        reply='Go(3);', commands=({"op": "Go", "arg": 3},),
                        actions=((1, 0), (1, 0), (1, 0)), steps=3, health=99.5, reward=-0.02,
                        events=({"kind": "decay", "reward": -0.02, "step": 3},),
                        usage=Usage(10, 5, 0.001, 0.2, 1))
    writer.write_turn(record)
    writer.finish(_result())

    episode_dir = store.episodes_dir / "01-04-03_t1"
    assert read_turns(episode_dir) == [record]
    assert (episode_dir / path).read_bytes() == frame_format.encode(frame)
    assert np.array_equal(read_frame(episode_dir / path), frame_format.as_stored(frame))
    assert read_result(episode_dir) == _result()


def test_unfinished_episode_is_restarted_not_duplicated(tmp_path):
    store = RunStore(tmp_path)
    writer = store.start_episode("a_t1")
    writer.write_turn(TurnRecord(turn=1, sent_text="x"))
    writer.close()  # crash: no result
    assert store.finished_results() == {}

    writer = store.start_episode("a_t1")
    writer.write_turn(TurnRecord(turn=1, sent_text="y"))
    writer.finish(_result("a_t1"))
    turns = read_turns(store.episodes_dir / "a_t1")
    assert [t.sent_text for t in turns] == ["y"]
    with pytest.raises(FileExistsError):
        store.start_episode("a_t1")


def test_summary_has_one_row_per_finished_episode(tmp_path):
    store = RunStore(tmp_path)
    for eid, passed in [("b_t1", False), ("a_t1", True)]:
        writer = store.start_episode(eid)
        writer.finish(_result(eid, passed=passed))
    store.start_episode("c_t1").close()  # unfinished: not in the summary
    lines = store.write_summary().read_text().splitlines()
    assert lines[0].startswith("episode_id,task_id,level")
    assert [line.split(",")[0] for line in lines[1:]] == ["a_t1", "b_t1"]


def test_failed_attempt_is_kept_aside(tmp_path):
    store = RunStore(tmp_path)
    writer = store.start_episode("a_t1")
    writer.write_turn(TurnRecord(turn=1, sent_text="first"))
    writer.close()
    kept = store.keep_failed_attempt("a_t1", 1)
    assert kept.name == "a_t1.attempt-1"
    assert read_turns(kept)[0].sent_text == "first"
    assert not (store.episodes_dir / "a_t1").exists()


def test_foreign_schema_version_is_refused_with_file_and_line(tmp_path):
    episode = tmp_path / "ep"
    episode.mkdir()
    good = {"turn": 1, "sent_text": "ok", "schema": 1}
    bad = dict(good, schema=99)
    (episode / "turns.jsonl").write_text(json.dumps(good) + "\n" + json.dumps(bad) + "\n")
    with pytest.raises(SchemaError, match=r"turns.jsonl:2: .*schema 99"):
        read_turns(episode)


def test_manifest_missing_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="not an llm-aai run directory"):
        RunStore(tmp_path).read_manifest()


def test_a_turn_that_is_not_a_json_object_is_a_schema_error_with_file_and_line(tmp_path):
    episode = tmp_path / "ep"
    episode.mkdir()
    good = {"turn": 1, "sent_text": "ok", "schema": 1}
    (episode / "turns.jsonl").write_text(json.dumps(good) + "\n[1, 2]\n")
    with pytest.raises(SchemaError,
                       match=r"turns\.jsonl:2: .*expected a JSON object, got an array"):
        read_turns(episode)


def test_a_turn_whose_usage_is_not_an_object_is_a_schema_error(tmp_path):
    episode = tmp_path / "ep"
    episode.mkdir()
    bad = {"turn": 1, "sent_text": "ok", "usage": "free", "schema": 1}
    (episode / "turns.jsonl").write_text(json.dumps(bad) + "\n")
    with pytest.raises(SchemaError, match=r"turns\.jsonl:1: usage: expected a JSON object, "
                                          r"got a string"):
        read_turns(episode)


def test_a_null_result_is_a_schema_error_naming_the_file(tmp_path):
    episode = tmp_path / "ep"
    episode.mkdir()
    (episode / "result.json").write_text("null\n")
    with pytest.raises(SchemaError, match=r"result\.json: .*expected a JSON object, got null"):
        read_result(episode)


def test_a_result_set_aside_while_the_summary_is_written_is_skipped(tmp_path, monkeypatch):
    import llm_aai.logs.store as store_module

    store = RunStore(tmp_path / "run")
    for eid in ("01-04-03_t1", "01-06-02_t1"):
        writer = store.start_episode(eid)
        writer.finish(_result(eid))
    original = store_module.read_result

    def set_aside_first(directory):  # another thread moves it between listing and reading
        if directory.name == "01-04-03_t1":
            store.keep_failed_attempt("01-04-03_t1", 1)
        return original(directory)

    monkeypatch.setattr(store_module, "read_result", set_aside_first)
    store.write_summary()
    rows = (tmp_path / "run" / "summary.csv").read_text().splitlines()[1:]
    assert [row.split(",")[0] for row in rows] == ["01-06-02_t1"]


@pytest.mark.parametrize("umask", [0o022, 0o027, 0o002])
def test_every_file_of_a_run_honours_the_umask(tmp_path, umask):
    """manifest.json, summary.csv and result.json used to be 0600 whatever the umask."""
    old = os.umask(umask)
    try:
        store = RunStore(tmp_path / "run")
        store.write_manifest({"run_id": "run"})
        writer = store.start_episode("01-04-03_t1")
        writer.save_frame(1, 0, np.zeros((8, 8, 3), np.uint8))
        writer.write_turn(TurnRecord(turn=0, sent_text=""))
        writer.finish(_result())
        store.write_summary()
    finally:
        os.umask(old)
    files = {p.relative_to(store.root).as_posix(): stat.S_IMODE(p.stat().st_mode)
             for p in store.root.rglob("*") if p.is_file() and p.name != ".lock"}
    assert {"manifest.json", "summary.csv", "episodes/01-04-03_t1/result.json",
            "episodes/01-04-03_t1/turns.jsonl"} <= set(files)
    assert files == dict.fromkeys(files, 0o666 & ~umask)
    assert not list(store.root.rglob("*.tmp"))


def _log_with_turns(tmp_path, count=3):
    writer = RunStore(tmp_path / "run").start_episode("01-04-03_t1")
    for turn in range(count):
        writer.write_turn(TurnRecord(turn=turn, sent_text="Ça va? " * 3, reply="Go(1);"))
    writer.close()
    return writer.directory


@pytest.mark.parametrize("keep", [1, 9, 10])  # byte 9 splits the two-byte "Ç"
def test_a_turn_line_cut_by_a_kill_is_where_the_log_ends(tmp_path, keep):
    directory = _log_with_turns(tmp_path)
    log = directory / "turns.jsonl"
    lines = log.read_bytes().splitlines(keepends=True)
    log.write_bytes(b"".join(lines[:2]) + lines[2][:keep])
    turns, cut = read_turns_until_cut(directory)
    assert [t.turn for t in turns] == [0, 1]
    assert (cut.path, cut.line, cut.last_intact_turn) == (log, 3, 1)
    with pytest.raises(SchemaError, match=r"turns.jsonl:3: the log ends in a cut line"):
        read_turns(directory)


def test_a_malformed_line_before_the_end_is_still_an_error(tmp_path):
    directory = _log_with_turns(tmp_path)
    log = directory / "turns.jsonl"
    lines = log.read_bytes().splitlines(keepends=True)
    log.write_bytes(lines[0] + lines[1][:20] + b"\n" + lines[2])
    with pytest.raises(SchemaError, match=r"turns.jsonl:2: "):
        read_turns_until_cut(directory)
    assert read_turns_until_cut(_log_with_turns(tmp_path / "whole"))[1] is None


def _paid_turns(store: RunStore, episode_id: str, costs) -> None:
    """An attempt interrupted after paid calls: its turns, no result."""
    writer = store.start_episode(episode_id)
    for turn, cost in enumerate(costs, start=1):
        writer.write_turn(TurnRecord(turn=turn, sent_text="x", reply="Go(1);",
                                     usage=Usage(input_tokens=100, output_tokens=5,
                                                 cost_usd=cost)))
    writer.close()


def test_an_interrupted_attempt_that_paid_is_counted_and_kept_aside(tmp_path):
    store = RunStore(tmp_path)
    _paid_turns(store, "a_t1", [0.25, None, 0.5])  # an unknown cost adds nothing it can count
    cut = store.episodes_dir / "a_t1" / "turns.jsonl"
    cut.write_bytes(cut.read_bytes() + b'{"turn": 4, "usa')  # a kill while writing turn 4
    assert store.spent() == (315, pytest.approx(0.75))

    assert store.set_aside_earlier_attempt("a_t1") == 1
    writer = store.start_episode("a_t1")
    writer.finish(_result("a_t1"))
    assert read_turns_until_cut(store.episodes_dir / "a_t1.attempt-1")[0][0].usage.cost_usd == 0.25
    assert store.spent() == (315 + _result().input_tokens + _result().output_tokens,
                             pytest.approx(0.75 + _result().cost_usd))


def test_an_interrupted_attempt_that_paid_nothing_is_replaced(tmp_path):
    store = RunStore(tmp_path)
    writer = store.start_episode("a_t1")
    writer.write_turn(TurnRecord(turn=0, sent_text=""))  # only the start's no-ops
    writer.close()
    assert store.set_aside_earlier_attempt("a_t1") == 0
    store.start_episode("a_t1").close()
    assert [p.name for p in store.episodes_dir.iterdir()] == ["a_t1"]


def test_what_a_damaged_turn_log_spent_cannot_be_guessed(tmp_path):
    store = RunStore(tmp_path)
    _paid_turns(store, "a_t1", [0.25, 0.25, 0.25])
    log = store.episodes_dir / "a_t1" / "turns.jsonl"
    lines = log.read_bytes().splitlines(keepends=True)
    log.write_bytes(lines[0] + b"not json\n" + lines[2])
    with pytest.raises(SchemaError, match=r"a_t1/turns.jsonl:2: "):
        store.spent()
