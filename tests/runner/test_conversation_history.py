"""Resuming ``--context across-tasks`` when a finished task's history is damaged.

The next task of a conversation is sent the earlier tasks' exchanges, read from their turn
logs; a log damaged since must stop the resume before anything plays, naming the file and
line, rather than in the middle of the conversation.
"""

from __future__ import annotations

import pytest

from llm_aai.llm.fake_server import FakeChatServer
from llm_aai.logs import RunStore
from llm_aai.runner import RunError, RunInterrupted, resume_run, start_run
from tests.runner.test_resume_modes import MODES, config_for, interrupting


def test_a_damaged_turn_log_of_a_finished_task_stops_the_resume_naming_it(
        testbed_dir, tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    settings, responder, tasks, at = MODES["across tasks"]
    with FakeChatServer(responder=interrupting(responder, at)) as server:
        with pytest.raises(RunInterrupted):
            start_run(config_for(settings, tasks, testbed_dir, server.url),
                      out=tmp_path, run_id="cut", show_progress=False)
        run_dir = tmp_path / "cut"
        assert set(RunStore(run_dir).finished_results()) == {"01-04-03_t1"}
        log = run_dir / "episodes" / "01-04-03_t1" / "turns.jsonl"
        lines = log.read_text(encoding="utf-8").splitlines(keepends=True)
        lines[1] = "{not a record\n"
        log.write_text("".join(lines), encoding="utf-8")
        sent = len(server.requests)
        with pytest.raises(RunError, match=rf"{log}:2") as stopped:
            resume_run(run_dir, show_progress=False)
        assert "conversation trial-1" in str(stopped.value)
        assert len(server.requests) == sent  # stopped before the next task was sent anything


def test_a_finished_task_naming_a_frame_outside_its_folder_stops_the_resume(
        testbed_dir, tmp_path, monkeypatch):
    """The next task is sent the earlier tasks' frames: a run folder from elsewhere whose log
    names a file of this machine must not have it sent to the model."""
    import json

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    secret = tmp_path / "secret.png"
    settings, responder, tasks, at = MODES["across tasks"]
    with FakeChatServer(responder=interrupting(responder, at)) as server:
        with pytest.raises(RunInterrupted):
            start_run(config_for(settings, tasks, testbed_dir, server.url),
                      out=tmp_path, run_id="cut", show_progress=False)
        log = tmp_path / "cut" / "episodes" / "01-04-03_t1" / "turns.jsonl"
        records = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
        shown = next(r for r in records if r["turn"] >= 1 and r["sent_images"])
        secret.write_bytes((log.parent / shown["sent_images"][0]).read_bytes())
        shown["sent_images"][0] = str(secret)
        log.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
        sent = len(server.requests)
        with pytest.raises(RunError, match="is not a relative path inside the episode folder"):
            resume_run(tmp_path / "cut", show_progress=False)
        assert len(server.requests) == sent
