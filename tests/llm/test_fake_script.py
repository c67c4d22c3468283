"""The fake server's command-line script: fault specs and the order replies and faults play."""

from __future__ import annotations

import pytest

from llm_aai.llm.fake_script import Script, ScriptError, load_replies, parse_fault
from llm_aai.llm.fake_server import Cut, Delay, Drop, HTTPError, RateLimit, ServerError, Trickle


@pytest.mark.parametrize("spec, at, action", [
    ("429@3", 3, RateLimit(1.0)),
    ("429:2.5@1", 1, RateLimit(2.5)),
    ("503@2", 2, ServerError(503)),
    ("401@1", 1, HTTPError(401, "fake server: scripted 401")),
    ("drop@4", 4, Drop()),
    ("delay:3@2", 2, Delay(3.0, "R")),
    ("trickle:0.1@2", 2, Trickle(0.1, "R")),
    ("CUT@5", 5, Cut("R")),
])
def test_fault_specs_in_the_servers_vocabulary(spec, at, action):
    fault = parse_fault(spec)
    assert fault.at == at and fault.make("R") == action


@pytest.mark.parametrize("spec, says", [
    ("429", "KIND@N"), ("@3", "KIND@N"), ("429@0", "not a request number"),
    ("429@-1", "not a request number"), ("429@x", "not a request number"),
    ("teapot@1", "unknown fault"), ("700@1", "unknown fault"), ("399@1", "unknown fault"),
    ("delay@2", "needs its seconds"), ("drop:3@1", "takes no ':' value"),
    ("delay:-1@1", "not a number of seconds"), ("delay:nan@1", "not a number of seconds"),
    ("429:inf@1", "not a number of seconds"), ("delay:soon@1", "not a number of seconds"),
])
def test_bad_fault_specs_say_what_is_wrong(spec, says):
    with pytest.raises(ScriptError, match=says):
        parse_fault(spec)


def test_a_fault_that_answers_instead_of_a_reply_keeps_the_reply_for_the_next_request():
    script = Script(["a", "b", "c"], [parse_fault("429@2"), parse_fault("delay:1@4")],
                    default="d")
    answers = [script({}) for _ in range(5)]
    assert answers == ["a", RateLimit(1.0), "b", Delay(1.0, "c"), "d"]


def test_two_faults_for_one_request_are_refused():
    with pytest.raises(ScriptError, match="both answer request 2"):
        Script([], [parse_fault("429@2"), parse_fault("drop@2")], default="d")


def test_replies_as_json_yaml_and_lines(tmp_path):
    (tmp_path / "r.json").write_text('["Go(1);", "Think(\\"a\\nb\\");Go(2);", ""]')
    (tmp_path / "r.yml").write_text("- Go(1);\n- |\n  Think(\"a\n  b\");Go(2);\n- ''\n")
    (tmp_path / "r.txt").write_text("Go(1);\r\n\n  Turn(30);  \n")
    assert load_replies(tmp_path / "r.json") == ["Go(1);", 'Think("a\nb");Go(2);', ""]
    assert load_replies(tmp_path / "r.yml") == ["Go(1);", 'Think("a\nb");Go(2);\n', ""]
    assert load_replies(tmp_path / "r.txt") == ["Go(1);", "  Turn(30);  "]


@pytest.mark.parametrize("name, data, where", [
    ("r.txt", b"Go(1);\n\xff\xfe\n", ":2: not UTF-8"),
    ("r.yaml", b"- !!python/object/apply:os.system ['echo hi']\n", ":1:"),
    ("r.yaml", b"- a\n- b: [1\n", ":3:"),
    ("r.yaml", b"", ": a YAML list"),
    ("r.json", b'{"replies": []}', ":1: a JSON list"),
    ("r.json", b"[]", ": no replies"),
])
def test_bad_replies_files_name_file_and_line(tmp_path, name, data, where):
    path = tmp_path / name
    path.write_bytes(data)
    with pytest.raises(ScriptError) as raised:
        load_replies(path)
    assert str(raised.value).startswith(f"{path}{where}")
