"""``--context across-tasks``: a trial's tasks in one conversation, through the fake server."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from llm_aai.cli.run import main as run_main
from llm_aai.llm.fake_server import FakeChatServer, ServerError
from llm_aai.logs import RunStore, read_turns
from llm_aai.protocol import EpisodeProtocol
from llm_aai.protocol.across_tasks import conversation_order
from llm_aai.protocol.modes import ModeSettings
from llm_aai.replay import load_episode, resimulate
from llm_aai.runner import ModelOptions, RunConfig, estimate_run, resume_run, start_run
from llm_aai.settings import read_settings
from tests.helpers.modes import by_user_count, images_of, text_of

ACROSS = ModeSettings(context="across-tasks")
TASKS = "01-04-03,01-06-02"


def across_run(testbed_dir, tmp_path, model="openai/fake", *, run_id="across", **changes):
    config = replace(RunConfig(model=model, tasks=TASKS, arenas_dir=testbed_dir,
                               resolution=64, modes=ACROSS,
                               protocol=EpisodeProtocol(max_scripts=2),
                               model_options=ModelOptions(max_retries=0)), **changes)
    return start_run(config, out=tmp_path / "runs", run_id=run_id, show_progress=False).run_dir


def fake_run(testbed_dir, tmp_path, monkeypatch, **changes):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with FakeChatServer(responder=by_user_count) as server:
        options = replace(changes.pop("model_options", ModelOptions(max_retries=0)),
                          api_base=server.url)
        run_dir = across_run(testbed_dir, tmp_path, model_options=options, **changes)
        return run_dir, [request.body for request in server.requests]


def test_the_second_task_opens_with_the_first_tasks_messages_and_outcome(
        testbed_dir, tmp_path, monkeypatch):
    run_dir, bodies = fake_run(testbed_dir, tmp_path, monkeypatch)
    store = RunStore(run_dir)
    results = store.finished_results()
    first, second = results["01-04-03_t1"], results["01-06-02_t1"]
    assert (first.conversation, first.position) == ("trial-1", 1)
    assert (second.conversation, second.position) == ("trial-1", 2)
    assert [first.scripts_used, second.scripts_used] == [2, 2] and len(bodies) == 4

    system = bodies[0]["messages"][0]["content"]
    assert "# Many levels in one conversation" in system
    # task 2's first request: everything task 1 sent and got, then the new level's message
    opening = bodies[2]["messages"]
    task_one = bodies[1]["messages"] + [{"role": "assistant",
                                         "content": by_user_count(bodies[1])}]
    assert opening[: len(task_one)] == task_one
    new = opening[len(task_one):]
    assert len(new) == 1 and new[0]["role"] == "user"
    outcome = (f"The level is over. Final health {first.final_health:.1f}, total reward "
               f"{first.reward:.3f}. You did not pass that level. Level 2 of 2 starts now.")
    assert text_of(new[0]).startswith(f"{outcome}\n\nObservation captured.")
    assert len(images_of(new[0])) == 3  # the new level's three opening pictures
    # the outcome is logged where it was sent: task 2's first turn
    turns = read_turns(run_dir / "episodes" / "01-06-02_t1")
    assert turns[1].turn == 1 and turns[1].sent_preamble == f"{outcome}\n\nObservation captured."

    summary = (run_dir / "summary.csv").read_text().splitlines()
    assert summary[0].endswith(",conversation,position")
    assert [row.split(",")[-2:] for row in summary[1:]] == [["trial-1", "1"], ["trial-1", "2"]]

    settings = read_settings(run_dir)
    assert settings.config.modes.context == "across-tasks"
    assert settings.config.modes.order == "testbed"
    assert settings.conversations == {"trial-1": ("01-04-03", "01-06-02")}


def test_old_images_fall_out_through_the_image_window(testbed_dir, tmp_path, monkeypatch):
    _, bodies = fake_run(testbed_dir, tmp_path, monkeypatch,
                         model_options=ModelOptions(max_retries=0, keep_last_images=3))
    opening = bodies[2]["messages"]
    assert sum(len(images_of(m)) for m in opening if m["role"] == "user") == 3
    assert len(images_of(opening[-1])) == 3  # the new level's own pictures are the ones kept
    assert "[an earlier picture was removed here" in text_of(opening[1])


def test_each_episode_replays_on_its_own(testbed_dir, tmp_path):
    run_dir = across_run(testbed_dir, tmp_path, "heuristic")
    for episode in ("01-04-03_t1", "01-06-02_t1"):
        report = resimulate(load_episode(run_dir / "episodes" / episode))
        assert report.ok, report.render()


@pytest.mark.parametrize("model", ["heuristic", "random"])
def test_the_built_in_agents_play_a_conversation_in_its_order(model, testbed_dir, tmp_path):
    modes = ModeSettings(context="across-tasks", order="shuffled")
    tasks = "01-04-03,01-06-02,02-02-01"
    run_dir = across_run(testbed_dir, tmp_path, model, modes=modes, trials=2, seed=5,
                         tasks=tasks, concurrency=2)
    results = RunStore(run_dir).finished_results()
    assert len(results) == 6
    for trial in (1, 2):
        order = conversation_order(tasks.split(","), "shuffled", seed=5, trial=trial)
        placed = sorted((r.position, r.task_id) for r in results.values()
                        if r.conversation == f"trial-{trial}")
        assert [task for _, task in placed] == list(order)
    orders = read_settings(run_dir).conversations
    assert orders["trial-1"] != orders["trial-2"]  # this seed gives two orders
    assert orders == {f"trial-{t}": conversation_order(tasks.split(","), "shuffled",
                                                       seed=5, trial=t) for t in (1, 2)}


def test_the_replay_agent_plays_a_conversation(testbed_dir, tmp_path):
    scripts = tmp_path / "scripts.txt"
    scripts.write_text("Turn(30);Go(3);\nGo(2);\n")
    run_dir = across_run(testbed_dir, tmp_path, "replay", replay_from=scripts)
    results = RunStore(run_dir).finished_results()
    assert sorted(r.position for r in results.values()) == [1, 2]
    assert all(r.scripts_used == 2 for r in results.values())


def test_the_order_is_stated_and_shuffled_reproducibly():
    tasks = [f"0{level}-0{n}-01" for level in range(1, 6) for n in range(1, 4)]
    assert conversation_order(tasks, "testbed", seed=0, trial=1) == tuple(tasks)
    shuffled = conversation_order(tasks, "shuffled", seed=3, trial=1)
    assert sorted(shuffled) == sorted(tasks) and shuffled != tuple(tasks)
    assert shuffled == conversation_order(tasks, "shuffled", seed=3, trial=1)
    assert shuffled != conversation_order(tasks, "shuffled", seed=4, trial=1)


def test_order_without_one_conversation_is_refused(capsys, tmp_path):
    assert run_main(["--model", "heuristic", "--order", "shuffled", "--out", str(tmp_path)]) == 2
    assert "error: --order shuffled orders the tasks of one conversation: give --context " \
           "across-tasks" in capsys.readouterr().err
    assert not any(tmp_path.iterdir())


def test_the_manifest_is_json_with_the_context(testbed_dir, tmp_path):
    run_dir = across_run(testbed_dir, tmp_path, "random")
    record = json.loads((run_dir / "manifest.json").read_text())
    assert record["run"]["config"]["modes"]["context"] == "across-tasks"
    assert record["run"]["conversations"] == {"trial-1": ["01-04-03", "01-06-02"]}


def test_the_dry_run_estimate_counts_the_history_across_tasks(testbed_dir, tmp_path, capsys):
    def estimated(printed: str) -> int:
        lines = dict(line.split(": ", 1) for line in printed.splitlines() if ": " in line)
        return int(lines["input tokens"].split()[0].replace(",", ""))

    with FakeChatServer(default='Think("I turn to look for the goal.");Turn(6);') as server:
        argv = ["--model", "openai/fake", "--api-base", server.url, "--tasks", TASKS,
                "--arenas-dir", str(testbed_dir), "--out", str(tmp_path), "--run-id", "r",
                "--resolution", "64", "--max-scripts", "3", "--no-progress",
                "--price-per-mtok", "3,15"]
        assert run_main([*argv, "--dry-run"]) == 0
        per_task = estimated(capsys.readouterr().out)
        assert run_main([*argv, "--context", "across-tasks", "--dry-run"]) == 0
        across = estimated(capsys.readouterr().out)
        assert run_main([*argv, "--context", "across-tasks"]) == 0
        capsys.readouterr()
    real = sum(r.input_tokens for r in RunStore(tmp_path / "r").finished_results().values())
    assert across > 1.1 * per_task  # task 2's three requests carry task 1's six messages
    assert abs(across - real) <= 0.25 * real
    assert abs(across - real) < abs(per_task - real)


def test_a_task_lost_to_the_model_server_stops_its_conversation_until_resume(
        testbed_dir, tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    script = ['Turn(30);', ServerError(503)]  # task 1's second request: the server is down
    with FakeChatServer(script, default="Go(2);") as server:
        run_dir = across_run(testbed_dir, tmp_path, max_relaunches=0, relaunch_delay_s=0.0,
                             model_options=ModelOptions(api_base=server.url, max_retries=0))
        store = RunStore(run_dir)
        results = store.finished_results()
        assert list(results) == ["01-04-03_t1"]  # task 2 needs task 1's outcome: not started
        assert results["01-04-03_t1"].end_reason == "infrastructure"
        assert len(server.requests) == 2
        resume_run(run_dir, show_progress=False)
    results = store.finished_results()
    assert [results[e].end_reason for e in ("01-04-03_t1", "01-06-02_t1")] == ["time_limit"] * 2
    assert results["01-06-02_t1"].position == 2 and results["01-04-03_t1"].attempts == 2


def test_conversations_run_in_parallel_and_a_conversations_tasks_in_turn(
        testbed_dir, tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    in_flight = {}
    for trials in (1, 2):
        with FakeChatServer(default="Turn(30);", latency_s=0.3) as server:
            options = ModelOptions(api_base=server.url, max_retries=0)
            run_dir = across_run(testbed_dir, tmp_path, run_id=f"t{trials}", trials=trials,
                                 concurrency=4, model_options=options)
            in_flight[trials] = server.max_in_flight
        assert len(RunStore(run_dir).finished_results()) == 2 * trials
    assert in_flight == {1: 1, 2: 2}  # one request at a time per conversation


def test_the_dry_run_of_a_built_in_agent_across_tasks_asks_nothing(testbed_dir):
    _, estimate = estimate_run(RunConfig(model="heuristic", tasks=TASKS, arenas_dir=testbed_dir,
                                         modes=ACROSS, trials=2))
    assert (estimate.episodes, estimate.requests, estimate.input_tokens) == (0, 0, 0)
