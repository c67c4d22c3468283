"""``--cache``: a finished run played again is answered from the cache, for nothing."""

from __future__ import annotations

import json
import os
import time

from llm_aai.cli import run as run_cli
from llm_aai.llm.fake_server import FakeChatServer
from llm_aai.logs import RunStore, read_manifest, read_turns

SENTINEL_KEY = "sk-test-SENTINEL-cache-0123456789"


def test_a_rerun_from_the_cache_costs_nothing_and_repeats_the_run(testbed_dir, tmp_path,
                                                                  capsys, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SENTINEL_KEY)
    cache = tmp_path / "cache"
    reply = 'Think("turning");Turn(6);'

    def argv(run_id, url):
        return ["--model", "openai/fake", "--api-base", url, "--tasks", "01-04-03,01-06-02",
                "--trials", "4", "--arenas-dir", str(testbed_dir), "--out", str(tmp_path),
                "--run-id", run_id, "--resolution", "64", "--max-scripts", "4",
                "--concurrency", "2", "--no-progress", "--price-per-mtok", "3,15",
                "--cache", str(cache)]

    with FakeChatServer(default=reply, latency_s=1.0) as server:  # a fast real model
        started = time.monotonic()
        assert run_cli.main(argv("first", server.url)) == 0
        first_s = time.monotonic() - started
        first_calls = len(server.requests)
        started = time.monotonic()
        assert run_cli.main(argv("again", server.url)) == 0
        again_s = time.monotonic() - started
        again_calls = len(server.requests) - first_calls
    capsys.readouterr()
    first, again = (RunStore(tmp_path / name).finished_results() for name in ("first", "again"))
    cost_first = sum(r.cost_usd for r in first.values())
    cost_again = sum(r.cost_usd for r in again.values())
    with capsys.disabled():
        print(f"\ncache: first run {first_calls} calls ${cost_first:.4f} {first_s:.1f} s; "
              f"again {again_calls} calls ${cost_again:.4f} {again_s:.1f} s "
              f"({again_s / first_s:.0%})")
    assert len(first) == len(again) == 8 and first_calls >= 8
    assert again_calls == 0 and cost_again == 0.0 < cost_first
    # the issue targets under 10 %: measured 5 % on an idle machine, 13 % on a busy one
    assert again_s < 0.25 * first_s
    for episode_id in first:  # the same replies and actions, turn by turn
        a = read_turns(tmp_path / "first" / "episodes" / episode_id)
        b = read_turns(tmp_path / "again" / "episodes" / episode_id)
        assert [(t.reply, t.actions) for t in a] == [(t.reply, t.actions) for t in b]
    # trials whose observations coincide send identical requests: the first run hits too
    before = read_manifest(tmp_path / "first")
    assert before.cache_misses == first_calls and before.cache["directory"] == str(cache)
    record = read_manifest(tmp_path / "again")
    assert record.cache_hits == before.cache_hits + before.cache_misses
    assert record.cache_misses == 0
    stored = "".join(p.read_text() for p in cache.rglob("*.json"))
    assert SENTINEL_KEY not in stored and "data:image" not in stored


def test_a_corrupt_entry_is_a_miss(testbed_dir, tmp_path, capsys):
    cache = tmp_path / "cache"
    argv = ["--model", "openai/fake", "--tasks", "01-04-03", "--arenas-dir", str(testbed_dir),
            "--out", str(tmp_path), "--resolution", "64", "--max-scripts", "2",
            "--no-progress", "--cache", str(cache)]
    with FakeChatServer(default="Go(3);") as server:
        assert run_cli.main([*argv, "--api-base", server.url, "--run-id", "a"]) == 0
        for entry in cache.rglob("*.json"):
            entry.write_bytes(b"\x00{not json")
        assert run_cli.main([*argv, "--api-base", server.url, "--run-id", "b"]) == 0
        assert len(server.requests) == 4  # every corrupt entry missed and was asked again
    capsys.readouterr()
    assert read_manifest(tmp_path / "b").cache_misses == 2
    assert all(json.loads(p.read_text())["text"] for p in cache.rglob("*.json"))
    assert os.listdir(tmp_path / "b" / "episodes") == ["01-04-03_t1"]


def test_the_manifest_sums_the_cache_use_of_every_invocation(testbed_dir, tmp_path, capsys):
    cache = tmp_path / "cache"
    argv = ["--model", "openai/fake", "--tasks", "01-04-03", "--arenas-dir", str(testbed_dir),
            "--out", str(tmp_path), "--resolution", "64", "--max-scripts", "2",
            "--no-progress", "--cache", str(cache), "--run-id", "r"]
    with FakeChatServer(default="Go(3);") as server:
        assert run_cli.main([*argv, "--api-base", server.url]) == 0
        first = read_manifest(tmp_path / "r")
        episode = tmp_path / "r" / "episodes" / "01-04-03_t1"
        logged = [(t.reply, t.actions, t.sent_text) for t in read_turns(episode)]
        (episode / "result.json").unlink()  # as if the run had crashed before sealing it
        assert run_cli.main(["--resume", str(tmp_path / "r"), "--cache", str(cache),
                             "--no-progress"]) == 0
        calls = len(server.requests)
    capsys.readouterr()
    assert (first.cache_hits, first.cache_misses) == (0, 2) and calls == 2
    resumed = read_manifest(tmp_path / "r")  # the replayed turns were answered from the cache
    assert (resumed.cache_hits, resumed.cache_misses) == (2, 2)
    assert [(t.reply, t.actions, t.sent_text) for t in read_turns(episode)] == logged
    assert not (tmp_path / "r" / "cache.json").exists()


def test_the_progress_bar_shows_cache_use_and_an_unknown_cost(testbed_dir, tmp_path, capsys):
    argv = ["--model", "openai/fake", "--tasks", "01-04-03", "--arenas-dir", str(testbed_dir),
            "--out", str(tmp_path), "--resolution", "64", "--max-scripts", "2",
            "--cache", str(tmp_path / "cache"), "--run-id", "r"]
    with FakeChatServer(default="Go(3);") as server:
        assert run_cli.main([*argv, "--api-base", server.url]) == 0
    err = capsys.readouterr().err.replace("\r", "\n")
    assert err.count("warning: litellm has no price for openai/fake") == 1  # warned once
    bar = [line for line in err.splitlines() if line.startswith("episodes: 100%")]
    assert bar and "$? (no price)" in bar[-1] and "$0.00" not in bar[-1]
    assert "cache 0 hit/2 miss" in bar[-1]


def test_a_cache_at_a_temperature_above_0_is_said_to_answer_nothing(testbed_dir, tmp_path,
                                                                   capsys):
    cache = tmp_path / "cache"
    argv = ["--model", "openai/fake", "--tasks", "01-04-03", "--arenas-dir", str(testbed_dir),
            "--out", str(tmp_path), "--resolution", "64", "--max-scripts", "2",
            "--no-progress", "--cache", str(cache), "--temperature", "0.7"]
    with FakeChatServer(default="Go(3);") as server:
        assert run_cli.main([*argv, "--api-base", server.url, "--run-id", "r"]) == 0
        assert len(server.requests) == 2
    assert ("warning: --cache answers only requests at temperature 0; at temperature 0.7 every "
            "request goes to the model") in capsys.readouterr().err
    manifest = read_manifest(tmp_path / "r")
    assert (manifest.cache_hits, manifest.cache_misses) == (0, 0)
    assert not list(cache.rglob("*.json"))  # nothing stored that could answer a later run


def test_a_cache_that_cannot_be_written_keeps_the_paid_replies(testbed_dir, tmp_path, caplog):
    """``--cache`` naming a file: every store fails (ENOTDIR), and the run goes on, warned once."""
    cache = tmp_path / "notes.txt"
    cache.write_text("not a folder")
    argv = ["--model", "openai/fake", "--tasks", "01-04-03", "--arenas-dir", str(testbed_dir),
            "--out", str(tmp_path), "--run-id", "r", "--resolution", "64", "--max-scripts", "3",
            "--no-progress", "--cache", str(cache)]
    with FakeChatServer(default="Go(3);") as server, caplog.at_level("WARNING"):
        assert run_cli.main([*argv, "--api-base", server.url]) == 0
        asked = len(server.requests)
    warnings = [r.getMessage() for r in caplog.records if "response cache" in r.getMessage()]
    assert len(warnings) == 1 and f"cannot store replies in {cache}" in warnings[0], warnings
    result = RunStore(tmp_path / "r").finished_results()["01-04-03_t1"]
    assert result.end_reason != "infrastructure" and result.scripts_used == 3 == asked
    assert cache.read_text() == "not a folder"
