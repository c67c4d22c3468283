"""``python -m llm_aai.human serve``: one-line errors before serving."""

from __future__ import annotations

import socket

from llm_aai.cli.human import main


def test_an_unknown_task_is_one_line_and_exit_2(tmp_path, testbed_dir, capsys):
    assert main(["serve", "--tasks", "99-99-99", "--arenas-dir", str(testbed_dir),
                 "--out", str(tmp_path)]) == 2
    error = capsys.readouterr().err
    assert error.startswith("error: ") and "99-99-99" in error and error.count("\n") == 1


def test_a_port_in_use_is_one_line_and_exit_2(tmp_path, testbed_dir, capsys):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        assert main(["serve", "--tasks", "01-04-03", "--arenas-dir", str(testbed_dir),
                     "--out", str(tmp_path), "--port", str(port)]) == 2
    assert f"cannot listen on 127.0.0.1:{port}" in capsys.readouterr().err
