"""The app over real HTTP and WebSockets, with the real simulator and real run directories."""

from __future__ import annotations

import json
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from llm_aai.analysis import load_runs
from llm_aai.human.app import COOKIE, MAX_KEY_EVENTS_PER_S, MAX_SCRIPT_BYTES
from llm_aai.logs.store import read_manifest, read_result, read_turns
from llm_aai.replay import load_episode, resimulate
from llm_aai.runner.app import OpenRun
from tests.human.conftest import SCRIPTS_0403, served, settled, start


def _scripts(client, scripts):
    view = None
    for script in scripts:
        response = client.post("/api/script", json={"script": script})
        assert response.status_code == 200, response.text
        view = response.json()
    return view


def test_scripts_play_a_level_as_a_model_would_and_log_an_ordinary_run(server):
    with server.client() as client:
        first = start(client, "script-1")
        assert first["phase"] == "your_turn" and first["level"] == 1 and first["levels"] == 2
        assert len(first["images"]) == 3  # the three opening pictures, as a model gets them
        assert first["text"].startswith("Your remaining health is")
        assert first["max_scripts"] == 30
        refused = _scripts(client, ["Go(3)"])  # no semicolon: the strict grammar refuses it
        assert refused["preamble"].startswith("Your last reply could not be carried out:")
        assert refused["replies"] == 1 and len(refused["images"]) == 1
        over = _scripts(client, SCRIPTS_0403)
        assert over["phase"] == "level_over"
        assert over["message"].startswith("The level is over.")
        assert client.post("/api/script", json={"script": "Go(1);"}).status_code == 409
    run_dir = server.out / "human-script-script-1"
    manifest = read_manifest(run_dir)
    assert manifest.agent_name == "human"
    assert manifest.agent["options"]["participant"] == "script-1"
    assert manifest.agent["options"]["interface"] == "script"
    result = read_result(run_dir / "episodes" / "01-04-03_t1")
    assert result.passed and result.agent == "human" and result.scripts_used == 3
    assert result.invalid_replies == 1
    turns = read_turns(run_dir / "episodes" / "01-04-03_t1")
    assert [t.reply for t in turns[1:4]] == ["Go(3)", *SCRIPTS_0403]
    runs = load_runs([run_dir])  # analyze reads the participant like any run
    assert list(runs.episodes["label"]) == ["human"]
    assert bool(runs.episodes["passed"].iloc[0])
    replayed = resimulate(load_episode(run_dir / "episodes" / "01-04-03_t1"),
                          arenas_dir=server.study.base.arenas_dir)
    assert replayed.ok, replayed.render()  # replay re-simulates it frame for frame


def test_the_next_level_follows_and_the_last_one_ends_the_session(server):
    with server.client() as client:
        start(client, "script-2")
        assert _scripts(client, SCRIPTS_0403)["phase"] == "level_over"
        second = client.post("/api/next").json()
        assert second["phase"] == "your_turn" and second["level"] == 2
        assert second["replies"] == 0
        assert client.post("/api/next").status_code == 409  # the level is not over
        view = second
        while view["phase"] == "your_turn":  # 30 scripts then the clock runs out
            view = _scripts(client, ["Turn(6);"])
        assert view["phase"] == "done" and view["replies"] == 30
    results = read_result(server.out / "human-script-script-2" / "episodes" / "01-06-02_t1")
    assert results.scripts_used == 30 and results.end_reason in ("script_cap", "time_limit",
                                                                 "health")


def test_a_participant_id_is_taken_once_and_a_bad_one_is_named(server):
    with server.client() as client:
        start(client, "twice")
        again = server.client().post("/api/sessions", json={"participant": "twice",
                                                            "interface": "script"})
        assert again.status_code == 409 and "has a session open already" in again.json()["error"]
        bad = client.post("/api/sessions", json={"participant": "../etc", "interface": "script"})
        assert bad.status_code == 409 and "participant id must be" in bad.json()["error"]


def test_only_the_apps_routes_are_served(server):
    with server.client() as client:
        for path in ("/static/../app.py", "/static/%2e%2e/app.py", "/static/", "/static",
                     "/templates/index.html", "/etc/passwd", "/static/human.py",
                     "/api/sessions/", "/..%2f..%2fetc%2fpasswd"):
            response = client.get(path)
            assert response.status_code in (404, 405), (path, response.status_code)
            assert "import" not in response.text and "root:" not in response.text
        assert client.get("/static/human.js").status_code == 200
        rebound = client.get("/", headers={"host": "attacker.example"})  # DNS rebinding
        assert rebound.status_code == 400
        assert client.get("/", headers={"host": "localhost"}).status_code == 200
        page = client.get("/")
        assert page.status_code == 200 and "default-src 'none'" in page.headers[
            "content-security-policy"]


def test_a_session_is_reached_by_its_own_token_only(server):
    with server.client() as owner, server.client() as other:
        view = start(owner, "owner")
        assert owner.cookies[COOKIE] and len(owner.cookies[COOKIE]) >= 40
        assert other.get("/api/state").status_code == 401
        other.cookies.set(COOKIE, "guessed-" + owner.cookies[COOKIE][8:])
        assert other.post("/api/script", json={"script": "Go(5);"}).status_code == 401
        start(other, "other")
        assert other.post("/api/script", json={"script": "Go(5);"}).status_code == 200
        assert owner.get("/api/state").json()["version"] == view["version"]  # untouched


def test_bad_input_gets_a_clear_message_and_plays_nothing(server):
    with server.client() as client:
        before = start(client, "bad-input")
        huge = client.post("/api/script", json={"script": "Go(1);" * ((1 << 20) // 6)})
        assert huge.status_code == 413
        assert f"{MAX_SCRIPT_BYTES:,} bytes" in huge.json()["error"]
        garbled = client.post("/api/script", content=b'{"script": "Go(1);\xff\xfe"}',
                              headers={"content-type": "application/json"})
        assert garbled.status_code == 400 and "not UTF-8" in garbled.json()["error"]
        form = client.post("/api/script", data={"script": "Go(1);"})
        assert form.status_code == 415
        foreign = client.post("/api/script", json={"script": "Go(1);"},
                              headers={"origin": "http://evil.example"})
        assert foreign.status_code == 403
        assert client.get("/api/state").json()["version"] == before["version"]
        assert _scripts(client, ["Go(1);"])["replies"] == 1  # the session plays on


def test_one_sessions_crash_leaves_the_others_playing(server, monkeypatch):
    real_play = OpenRun.play

    def play(run, spec, agent):
        if "crasher" in run.run_dir.name:
            raise RuntimeError("the simulator fell over")
        return real_play(run, spec, agent)

    monkeypatch.setattr(OpenRun, "play", play)
    with server.client() as crasher, server.client() as steady:
        start(steady, "steady")
        crasher.post("/api/sessions", json={"participant": "crasher", "interface": "script"})
        stopped = settled(crasher)
        assert stopped["phase"] == "stopped"
        assert "the simulator fell over" in stopped["message"]
        assert _scripts(steady, SCRIPTS_0403)["phase"] == "level_over"


def _ws(server, client, **headers):
    cookie = f"{COOKIE}={client.cookies[COOKIE]}"
    host = server.url.removeprefix("http://")
    return connect(f"ws://{host}/ws/keys", additional_headers={
        "cookie": cookie, "origin": server.url, **headers}, open_timeout=30)


def _views(socket, until, timeout=60.0):
    """Read the socket's views (their JSON) until ``until(view)``; frames are skipped."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        message = socket.recv(timeout=deadline - time.monotonic())
        if isinstance(message, bytes):
            continue
        data = json.loads(message)
        if data["type"] == "view" and until(data):
            return data
    raise AssertionError("no such view came")


def test_keys_step_in_real_time_pause_when_the_tab_closes_and_flood_is_refused(server):
    with server.client() as client:
        client.post("/api/sessions", json={"participant": "keys-1", "interface": "keys"})
        with _ws(server, client) as socket:
            first = _views(socket, lambda v: v["phase"] == "playing")
            assert first["max_scripts"] is None and first["replies"] == 0
            socket.send(json.dumps({"held": ["ArrowLeft"], "seq": 1}))
            turned = _views(socket, lambda v: v["applied"] >= 1)
            socket.send(json.dumps({"held": [], "seq": 2}))
            moving = _views(socket, lambda v: v["replies"] >= turned["replies"] + 3)
            assert moving["phase"] == "playing"  # the clock runs with no key held
            for sequence in range(3, 3 + 3 * MAX_KEY_EVENTS_PER_S):
                socket.send(json.dumps({"held": [], "seq": sequence}))
            while True:
                data = json.loads(m) if isinstance(m := socket.recv(timeout=30), str) else {}
                if data.get("type") == "warning":
                    assert "key events in a second" in data["message"]
                    break
        time.sleep(0.3)  # the tab is closed: the clock pauses
        paused = client.get("/api/state").json()["replies"]
        time.sleep(0.5)
        assert client.get("/api/state").json()["replies"] == paused
        with _ws(server, client) as socket:  # a reload takes the session up where it was
            again = _views(socket, lambda v: True)
            assert again["replies"] == paused and again["phase"] == "playing"
        with pytest.raises(InvalidStatus, match="403"):  # another site's page is refused
            _ws(server, client, origin="http://evil.example")
    run = load_runs([server.out / "human-keys-keys-1"]).runs
    assert run["finished"].tolist() == [0]  # the level in play is not sealed
    assert read_manifest(server.out / "human-keys-keys-1").agent["options"]["interface"] == \
        "keys"


def test_stopping_the_server_keeps_every_finished_level(testbed_dir, tmp_path):
    with served(tmp_path, testbed_dir, "01-04-03,01-06-02", max_sessions=1) as running:
        with running.client() as client:
            start(client, "stopper")
            full = running.client().post("/api/sessions", json={"participant": "second",
                                                                "interface": "script"})
            assert full.status_code == 409 and "the most this server takes" in full.text
            _scripts(client, SCRIPTS_0403)
            client.post("/api/next")
            _scripts(client, ["Go(2);"])
    run_dir = tmp_path / "human-script-stopper"
    assert read_result(run_dir / "episodes" / "01-04-03_t1").passed
    assert not (run_dir / "episodes" / "01-06-02_t1" / "result.json").exists()
    assert "01-04-03_t1" in (run_dir / "summary.csv").read_text()
    assert load_runs([run_dir]).runs["unfinished"].tolist() == [1]


def test_keys_pass_a_level_and_the_next_level_answers_at_once(server):
    with server.client() as client:
        client.post("/api/sessions", json={"participant": "keys-2", "interface": "keys"})
        with _ws(server, client) as socket:
            _views(socket, lambda v: v["phase"] == "playing")
            for sequence in range(1, 11, 2):  # five taps of the left arrow: one step each
                socket.send(json.dumps({"held": ["ArrowLeft"], "seq": sequence}))
                socket.send(json.dumps({"held": [], "seq": sequence + 1}))
                _views(socket, lambda v, s=sequence + 1: v["applied"] >= s)
            socket.send(json.dumps({"held": ["ArrowUp"], "seq": 20}))
            over = _views(socket, lambda v: v["phase"] != "playing")
            assert over["phase"] == "level_over" and "The level is over" in over["message"]
            socket.send(json.dumps({"held": [], "seq": 21}))
            started = time.monotonic()
            second = client.post("/api/next").json()
            assert time.monotonic() - started < 20
            assert second["level"] == 2 and second["phase"] in ("starting", "playing")
    result = read_result(server.out / "human-keys-keys-2" / "episodes" / "01-04-03_t1")
    assert result.passed and result.end_reason == "good_goal"


def test_two_scripts_sent_at_once_play_one_and_refuse_the_other(server, monkeypatch):
    from llm_aai.env.backends.embedded import EmbeddedBackend

    with server.client() as client:
        before = start(client, "double")
        step = EmbeddedBackend.step

        def slow_step(self, *args, **kwargs):
            # A script's steps take a few ms at the study's 64 px: on a busy machine the
            # second request could arrive after the first had played and the next turn was
            # shown, and be taken for it. Half a second a step keeps the first playing.
            time.sleep(0.5)
            return step(self, *args, **kwargs)

        monkeypatch.setattr(EmbeddedBackend, "step", slow_step)
        with ThreadPoolExecutor(2) as pool:
            answers = list(pool.map(lambda script: client.post(
                "/api/script", json={"script": script}), ["Go(2);", "Go(3);"]))
        assert sorted(a.status_code for a in answers) == [200, 409]
        assert "no script is awaited now" in next(a for a in answers
                                                  if a.status_code == 409).json()["error"]
        assert settled(client)["replies"] == before["replies"] + 1


NESTED = b"[" * 8000
BAD_BODIES = {
    "nested 8,000 deep": NESTED,
    "nested inside a field": b'{"script": "Go(1);", "x": ' + b"[" * 5000 + b"]" * 5000 + b"}",
    "a list": b'["Go(1);"]',
    "a string": b'"Go(1);"',
    "null": b"null",
    "a number": b"7",
    "empty": b"",
    "cut short": b'{"script": "Go(1);"',
    "a number of 5,000 digits": b'{"script": ' + b"9" * 5000 + b"}",
    "a float out of range": b'{"script": 1e999999}',
    "the script a number": b'{"script": 5}',
    "the script a list": b'{"script": ["Go(1);"]}',
    "the script an object": b'{"script": {"a": 1}}',
    "a field unknown": b'{"script": "Go(1);", "speed": 2}',
    "no script": b"{}",
    "a lone surrogate": b'{"script": "\\ud800"}',
    "NaN": b'{"script": NaN}',
    "not UTF-8": b'{"script": "Go(1);\xc3\x28"}',
    "UTF-16": '{"script": "Go(1);"}'.encode("utf-16"),
}
BAD_STARTS = {
    "nested 8,000 deep": NESTED,
    "the id a number": b'{"participant": 12, "interface": "script"}',
    "the id null": b'{"participant": null}',
    "the interface unknown": b'{"participant": "p", "interface": "mouse"}',
    "the interface a list": b'{"participant": "p", "interface": ["keys"]}',
    "an id of 5,000 digits": b'{"participant": ' + b"1" * 5000 + b"}",
    "a list": b'[{"participant": "p"}]',
    "true": b"true",
}


def _post_raw(client, path, body):
    return client.post(path, content=body, headers={"content-type": "application/json"})


def test_a_body_that_is_not_the_expected_json_is_a_400_and_plays_nothing(server, capfd):
    with server.client() as client:
        before = start(client, "bad-bodies")
        for name, body in BAD_BODIES.items():
            answer = _post_raw(client, "/api/script", body)
            assert answer.status_code == 400, (name, answer.status_code, answer.text[:200])
            message = answer.json()["error"]
            assert "nothing was played" in message and len(message) < 300, (name, message)
        assert client.get("/api/state").json()["version"] == before["version"]
        assert _scripts(client, ["Go(1);"])["replies"] == 1  # the session plays on
    with server.client() as client:
        for name, body in BAD_STARTS.items():
            answer = _post_raw(client, "/api/sessions", body)
            assert answer.status_code == 400, (name, answer.status_code, answer.text[:200])
            assert len(answer.json()["error"]) < 300, name
            assert COOKIE not in client.cookies, name  # no session was made
    assert "Traceback" not in capfd.readouterr().err


def test_a_body_error_names_the_field_and_what_to_send(server):
    with server.client() as client:
        wrong = _post_raw(client, "/api/sessions", b'{"participant": 12}').json()["error"]
        assert wrong.startswith("participant: Input should be a valid string")
        assert '"participant", "interface"' in wrong
        deep = _post_raw(client, "/api/sessions", NESTED).json()["error"]
        assert "recursion limit" in deep
