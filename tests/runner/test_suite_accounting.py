"""What a run spends and keeps across attempts, invocations and interruptions."""

from __future__ import annotations

import dataclasses
import threading

import pytest

from llm_aai.agents.base import AgentReply
from llm_aai.arena import Task
from llm_aai.env import AnimalAIEnv
from llm_aai.llm.errors import LLMUnavailable
from llm_aai.logs import RunStore, read_result, read_turns
from llm_aai.logs.schema import SUMMARY_COLUMNS
from llm_aai.perception.observer import IMAGE_ONLY
from llm_aai.prompts import load_prompt
from llm_aai.protocol import EpisodeProtocol
from llm_aai.runner.episode import EpisodeCancelled
from llm_aai.runner.suite import Suite
from llm_aai.settings import ResolvedRun, RunConfig

PROTOCOL = EpisodeProtocol(max_scripts=2, run_out_clock=False)


class Costly:
    """Turns in place; every reply costs 30 cents."""

    name = "costly"

    def start_episode(self, system_prompt, seed, prelude=()):
        pass

    def act(self, turn):
        return AgentReply("Turn(6);", cost_usd=0.3, input_tokens=10, output_tokens=2)


class FailsAfterOneReply(Costly):
    """One paid reply, then the provider stays down."""

    def __init__(self):
        self.replies = 0

    def start_episode(self, system_prompt, seed, prelude=()):
        self.replies = 0

    def act(self, turn):
        self.replies += 1
        if self.replies > 1:
            raise LLMUnavailable("503 from the provider", attempts=3)
        return super().act(turn)


def make_suite(root, arena, agent, **config) -> Suite:
    run = ResolvedRun(RunConfig(model=agent.__name__, resolution=64, protocol=PROTOCOL,
                                relaunch_delay_s=0.0, **config), tasks=("01-01-01",))
    return Suite(run, RunStore(root), tasks=[Task("01-01-01", 1, "test")],
                 observation=IMAGE_ONLY, make_env=lambda: AnimalAIEnv(resolution=64),
                 make_agent=agent, prompt=load_prompt("react"), arena_path=lambda _: arena)


def test_the_budget_counts_what_earlier_invocations_spent(tmp_path, make_arena):
    arena, root = make_arena(), tmp_path / "run"
    first = make_suite(root, arena, Costly, trials=6, budget_usd=1.0).run()
    assert len(first) == 2  # 0.6 each: the second episode crosses the budget
    second = make_suite(root, arena, Costly, trials=6, budget_usd=1.0)
    assert second.run() == [] and second.stopped_by_budget
    assert second.progress.cost_usd == pytest.approx(1.2)
    raised = make_suite(root, arena, Costly, trials=6, budget_usd=2.0).run()
    assert len(raised) == 2  # 1.2 -> 2.4


def test_a_failed_attempt_keeps_its_log_and_its_cost(tmp_path, make_arena):
    root = tmp_path / "run"
    suite = make_suite(root, make_arena(), FailsAfterOneReply, max_relaunches=1)
    [result] = suite.run()
    assert result.end_reason == "infrastructure" and result.attempts == 2
    store = RunStore(root)
    set_aside = read_result(store.episodes_dir / "01-01-01_t1.attempt-1")
    assert set_aside.attempts == 1 and set_aside.cost_usd == pytest.approx(0.3)
    assert store.spent() == (24, pytest.approx(0.6))
    assert suite.progress.cost_usd == pytest.approx(0.6)


def test_attempt_numbers_continue_across_invocations_and_never_overwrite(tmp_path, make_arena):
    root, arena = tmp_path / "run", make_arena()
    make_suite(root, arena, FailsAfterOneReply, max_relaunches=1).run()  # attempts 1 and 2
    store = RunStore(root)
    marker = store.episodes_dir / "01-01-01_t1.attempt-1" / "marker"
    marker.write_text("attempt 1's log")
    # a crash during a third attempt leaves an unfinished directory and attempt 2 set aside
    store.set_aside_earlier_attempt("01-01-01_t1")
    (store.episodes_dir / "01-01-01_t1" / "frames").mkdir(parents=True)
    [result] = make_suite(root, arena, FailsAfterOneReply, max_relaunches=1).run()
    assert result.attempts == 4
    kept = sorted(p.name for p in store.episodes_dir.iterdir())
    assert kept == ["01-01-01_t1", "01-01-01_t1.attempt-1", "01-01-01_t1.attempt-2",
                    "01-01-01_t1.attempt-3"]
    assert marker.read_text() == "attempt 1's log"
    with pytest.raises(FileExistsError, match="already holds attempt 1"):
        store.keep_failed_attempt("01-01-01_t1", 1)


def test_what_an_interrupted_attempt_paid_for_counts_in_every_later_invocation(tmp_path,
                                                                             make_arena):
    """A run stopped after paid calls and resumed, again and again, cannot spend past its
    budget: the stopped attempt is kept beside its replay and its turns' costs are counted."""
    root, arena = tmp_path / "run", make_arena()
    answered = threading.Event()

    class PaysThenIsStopped(Costly):
        def act(self, turn):
            reply = super().act(turn)  # one paid reply (30 cents), then the run is stopped
            suite.cancel.set()
            answered.set()
            return reply

    suite = make_suite(root, arena, PaysThenIsStopped, budget_usd=0.3)
    with pytest.raises(EpisodeCancelled):
        suite.run()
    assert answered.is_set()
    store = RunStore(root)
    assert store.finished_results() == {} and store.spent() == (12, pytest.approx(0.3))

    again = make_suite(root, arena, Costly, budget_usd=0.3)
    assert again.run() == [] and again.stopped_by_budget  # the 30 cents are the budget
    assert again.progress.cost_usd == pytest.approx(0.3)

    [result] = make_suite(root, arena, Costly, budget_usd=2.0).run()
    assert result.attempts == 2 and result.cost_usd == pytest.approx(0.6)
    kept = store.episodes_dir / "01-01-01_t1.attempt-1"  # the stopped attempt, log and all
    assert not (kept / "result.json").exists() and len(read_turns(kept)) == 2
    assert store.spent() == (36, pytest.approx(0.9))


def test_cancel_stops_episodes_in_flight_and_leaves_them_unfinished(tmp_path, make_arena):
    started = threading.Event()

    class WaitsForCancel(Costly):
        def act(self, turn):
            started.set()
            assert suite.cancel.wait(timeout=30)
            return super().act(turn)

    suite = make_suite(tmp_path / "run", make_arena(), WaitsForCancel, trials=3, concurrency=2)
    raised: list[BaseException] = []

    def run() -> None:
        try:
            suite.run()
        except BaseException as error:  # noqa: BLE001 - the test inspects it
            raised.append(error)

    worker = threading.Thread(target=run)
    worker.start()
    assert started.wait(timeout=60)
    suite.cancel.set()
    worker.join(timeout=60)
    assert not worker.is_alive()
    assert [type(error) for error in raised] == [EpisodeCancelled]
    store = RunStore(tmp_path / "run")
    assert store.finished_results() == {}
    assert sorted(p.name for p in store.episodes_dir.iterdir()) == ["01-01-01_t1", "01-01-01_t2"]
    summary = (tmp_path / "run" / "summary.csv").read_text().splitlines()
    assert summary == [",".join(SUMMARY_COLUMNS)]
    assert len(suite.pending()) == 3


def test_episodes_lost_in_a_row_stop_the_run(tmp_path, make_arena):
    suite = make_suite(tmp_path / "run", make_arena(), FailsAfterOneReply, trials=5,
                       max_relaunches=0, stop_after_failed_episodes=2)
    results = suite.run()
    assert [r.end_reason for r in results] == ["infrastructure"] * 2
    assert suite.stopped_by_failures and len(suite.pending()) == 5


class AlwaysDown(Costly):
    """The provider is down from the first call."""

    def act(self, turn):
        raise LLMUnavailable("503 from the provider", attempts=1)


def test_failures_in_flight_stop_the_run_before_more_episodes_start(tmp_path, make_arena):
    suite = make_suite(tmp_path / "run", make_arena(), AlwaysDown, trials=12, concurrency=4,
                       max_relaunches=2, stop_after_failed_episodes=3)
    suite.config = dataclasses.replace(suite.config, relaunch_delay_s=1.0)
    results = suite.run()
    started = {p.name.split(".")[0] for p in suite.store.episodes_dir.iterdir()}
    assert len(started) == 4, started  # only those in flight when the failures began
    assert len(results) == 4 and all(r.end_reason == "infrastructure" for r in results)
    assert suite.stopped_by_failures and len(suite.pending()) == 12
    # once the threshold is reached, no episode in flight is relaunched again
    assert sum(r.attempts for r in results) < 4 * 3


def test_the_envs_close_even_when_the_summary_cannot_be_written(tmp_path, make_arena,
                                                              monkeypatch):
    """A full disk fails the summary as it failed the episode: a Unity player left open would
    then keep the process from exiting."""
    closed = []

    class RecordsClose(AnimalAIEnv):
        def close(self):
            closed.append(self)
            super().close()

    suite = make_suite(tmp_path / "run", make_arena(), Costly)
    suite.make_env = lambda: RecordsClose(resolution=64)

    def full_disk():
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(suite.store, "write_summary", full_disk)
    with pytest.raises(OSError, match="No space left"):
        suite.run()
    assert closed
