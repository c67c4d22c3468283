"""Abandoned sessions: taken over after the timeout, their level in play kept as an attempt."""

from __future__ import annotations

import json
import time

from websockets.sync.client import connect

from llm_aai.human.app import COOKIE
from llm_aai.logs.store import read_result, read_turns
from tests.human.conftest import SCRIPTS_0403, served, settled, start

TAKEOVER_S = 1.0


def _play(client, scripts):
    view = None
    for script in scripts:
        answer = client.post("/api/script", json={"script": script})
        assert answer.status_code == 200, answer.text
        view = answer.json()
    return view


def _begin(client, participant, interface="script"):
    return client.post("/api/sessions", json={"participant": participant,
                                              "interface": interface})


def test_an_abandoned_session_is_taken_over_after_the_timeout_and_its_level_kept(
        testbed_dir, tmp_path):
    with served(tmp_path, testbed_dir, "01-04-03,01-06-02", takeover_after=TAKEOVER_S) as running:
        lost = running.client()
        start(lost, "child-1")
        _play(lost, ["Go(1);", "Turn(10);"])  # then the browser closes: its cookie is gone
        with running.client() as stranger:  # at once: refused, the session may be in use
            refused = _begin(stranger, "child-1")
            assert refused.status_code == 409
            assert "take the session over" in refused.json()["error"]
        time.sleep(TAKEOVER_S + 0.3)
        with running.client() as back:
            view = start(back, "child-1")
            assert view["phase"] == "your_turn" and view["level"] == 1 and view["replies"] == 0
            assert lost.get("/api/state").status_code == 401  # the old page has no session
            assert _play(back, SCRIPTS_0403)["phase"] == "level_over"
            assert back.post("/api/next").json()["level"] == 2  # and plays on
        lost.close()
    episodes = tmp_path / "human-script-child-1" / "episodes"
    earlier = read_turns(episodes / "01-04-03_t1.attempt-1")
    assert [turn.reply for turn in earlier if turn.reply] == ["Go(1);", "Turn(10);"]
    result = read_result(episodes / "01-04-03_t1")
    assert result.passed and result.attempts == 2 and result.scripts_used == 2


def test_a_keyboard_page_still_connected_is_never_taken_over(testbed_dir, tmp_path):
    with served(tmp_path, testbed_dir, takeover_after=TAKEOVER_S) as running:
        with running.client() as child:
            assert _begin(child, "keys-child", "keys").status_code == 200
            host = running.url.removeprefix("http://")
            with connect(f"ws://{host}/ws/keys", open_timeout=30, additional_headers={
                    "cookie": f"{COOKIE}={child.cookies[COOKIE]}", "origin": running.url}) as ws:
                ws.send(json.dumps({"held": [], "seq": 1}))
                time.sleep(TAKEOVER_S + 0.3)  # no HTTP request, but the page is there
                with running.client() as stranger:
                    assert _begin(stranger, "keys-child", "keys").status_code == 409
            time.sleep(TAKEOVER_S + 0.3)  # the page went away: abandoned since
            with running.client() as back:
                assert _begin(back, "keys-child", "keys").status_code == 200
                assert settled(back)["phase"] in ("playing", "starting")


def test_a_full_server_gives_an_abandoned_place_and_the_participant_continues_later(
        testbed_dir, tmp_path):
    with served(tmp_path, testbed_dir, max_sessions=1, takeover_after=TAKEOVER_S) as running:
        first = running.client()
        start(first, "a")
        _play(first, ["Go(2);"])
        with running.client() as second:
            full = _begin(second, "b")
            assert full.status_code == 409 and "the most this server takes" in full.text
            time.sleep(TAKEOVER_S + 0.3)  # a's browser was closed meanwhile
            start(second, "b")
            assert _play(second, SCRIPTS_0403)["phase"] == "done"
        assert first.get("/api/state").status_code == 401
        first.close()
        with running.client() as again:  # a comes back under the same id
            view = start(again, "a")
            assert view["level"] == 1 and view["replies"] == 0
            assert _play(again, SCRIPTS_0403)["phase"] == "done"
            done = _begin(again, "a")
            assert done.status_code == 409 and "played every level" in done.json()["error"]
    episodes = tmp_path / "human-script-a" / "episodes"
    assert [t.reply for t in read_turns(episodes / "01-04-03_t1.attempt-1") if t.reply] == [
        "Go(2);"]
    assert read_result(episodes / "01-04-03_t1").attempts == 2
    assert read_result(tmp_path / "human-script-b" / "episodes" / "01-04-03_t1").passed
