"""``python -m llm_aai.llm.fake_server``: the fake chat server as a command of its own.

Why a command: ``run --help`` names the fake server as an ``--api-base`` target, and a user
trying their prompts or settings without a key wants it in another terminal, not in Python.
It serves until Ctrl-C or SIGTERM, on the loopback unless told otherwise (it has no
authentication), and prints its address on one line once it answers, so a script can read
the line and start a run against it.
"""

from __future__ import annotations

import argparse
import json
import math
import signal
import socket
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from llm_aai.hosts import is_loopback
from llm_aai.llm.fake_script import (
    FAULT_KINDS,
    Fault,
    Script,
    ScriptError,
    load_faults,
    load_replies,
    parse_fault,
)
from llm_aai.llm.fake_server import FakeChatServer, RecordedRequest

__all__ = ["DEFAULT_REPLY", "main"]

DEFAULT_REPLY = 'Think("The fake server gives this reply to every request.");Go(5);'
"""What every request gets with no replies file, and once the file's replies are used up."""

EXIT_USAGE = 2  # as argparse's own errors
EXIT_CANNOT_LISTEN = 1


class _Stopped(Exception):
    """SIGINT or SIGTERM arrived: stop serving."""


def _port(text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number (0-65535)") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{text} is not a port number (0-65535)")
    return port


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds (0 or more)")
    return value


def _fault(text: str) -> Fault:
    try:
        return parse_fault(text)
    except ScriptError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m llm_aai.llm.fake_server",
        description="Serve a fake OpenAI- and Anthropic-compatible chat model that answers "
                    "from a script, for runs without an API key: python -m llm_aai.run "
                    "--model openai/fake --api-base URL (the URL printed).")
    parser.add_argument("--host", default="127.0.0.1",
                        help="address to listen on (default: %(default)s); one that is not "
                             "the loopback needs --allow-remote")
    parser.add_argument("--port", type=_port, default=0,
                        help="port to listen on; 0 picks a free one (default: %(default)s)")
    parser.add_argument("--allow-remote", action="store_true",
                        help="listen on an address other machines can reach (the server has "
                             "no authentication: anyone who reaches it is answered)")
    parser.add_argument("--replies", type=Path, metavar="FILE",
                        help="replies in order: a .json or .yaml/.yml list of strings, or "
                             "text with one reply a line")
    parser.add_argument("--reply", default=DEFAULT_REPLY, metavar="TEXT",
                        help="the reply once the file's are used up, or to every request "
                             "without --replies (default: %(default)s)")
    parser.add_argument("--delay", type=_seconds, default=0.0, metavar="SECONDS",
                        help="wait this long before each answer (default: %(default)g)")
    parser.add_argument("--fault", type=_fault, action="append", default=[],
                        metavar="KIND@N",
                        help="answer the N-th request (from 1) with KIND instead of a reply: "
                             f"{', '.join(FAULT_KINDS)} (e.g. 429@3, delay:30@2); repeatable")
    parser.add_argument("--faults", type=Path, metavar="FILE",
                        help="faults from a file, one KIND@N a line (# starts a comment)")
    parser.add_argument("--record", type=Path, metavar="FILE",
                        help="write each request received to FILE as one JSON line (path "
                             "and body; never the API key), replacing the file")
    parser.add_argument("--model-name", default="fake-model",
                        help="the model /v1/models lists (default: %(default)s)")
    return parser


def _loopback_problem(host: str) -> str | None:
    """Why ``host`` is not a loopback address, or None if every address it names is one."""
    try:
        addresses = {info[4][0] for info in socket.getaddrinfo(host, None)}
    except socket.gaierror as error:
        return f"--host {host}: no such address ({error.strerror})"
    outside = sorted(a for a in addresses if not is_loopback(a))
    if outside:
        return (f"--host {host} is reachable from other machines ({', '.join(outside)}) and "
                f"the server has no authentication; add --allow-remote to serve there anyway")
    return None


class _Recorder:
    """``--record``: one JSON line a request, flushed at once, so a killed server keeps them.

    The file is replaced only once the server listens (``open``), so a start that fails (a
    busy port) leaves an earlier recording as it was.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._handle: TextIO | None = None
        self._lock = threading.Lock()
        self._settled = threading.Event()  # opened, failed to, or closed
        self._count = 0

    def open(self) -> None:
        """Create or empty the file. Raises OSError if it cannot be written."""
        try:
            with self._lock:
                self._handle = self.path.open("w", encoding="utf-8")
        finally:
            self._settled.set()

    def __call__(self, request: RecordedRequest) -> None:
        self._settled.wait()  # a request that came between the bind and open waits for it
        with self._lock:
            if self._handle is None:  # the file failed to open, or the server stopped
                return
            self._count += 1
            answer = request.action
            line = {"request": self._count, "path": request.path, "body": request.body,
                    **({"reply": answer} if isinstance(answer, str)
                       else {"fault": repr(answer)})}
            self._handle.write(json.dumps(line) + "\n")
            self._handle.flush()

    def close(self) -> None:
        self._settled.set()
        with self._lock:
            if self._handle is not None:
                self._handle.close()
                self._handle = None


def _script(args: argparse.Namespace) -> Script:
    replies = load_replies(args.replies) if args.replies is not None else []
    faults = [*args.fault, *(load_faults(args.faults) if args.faults is not None else [])]
    return Script(replies, faults, args.reply)


def _raise_stopped(_signum: int, _frame) -> None:
    raise _Stopped


def main(argv: Sequence[str] | None = None) -> int:
    """Serve until SIGINT or SIGTERM; return the exit status."""
    args = _parser().parse_args(argv)
    try:
        script = _script(args)
    except ScriptError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_USAGE
    outside = _loopback_problem(args.host)
    if outside is not None and not args.allow_remote:
        print(f"error: {outside}", file=sys.stderr)
        return EXIT_USAGE
    recorder = _Recorder(args.record) if args.record is not None else None
    server = FakeChatServer(responder=script, latency_s=args.delay,
                            model_name=args.model_name, recorder=recorder)
    # SIGINT only where Python takes it: a shell's background job started with it ignored
    # keeps ignoring it, as the run command does (llm_aai.cli.signals).
    taken = [signal.SIGTERM, *([signal.SIGINT] if signal.getsignal(signal.SIGINT)
                               is not signal.SIG_IGN else [])]
    previous = {number: signal.signal(number, _raise_stopped) for number in taken}
    try:
        try:
            server.start(args.host, args.port)
        except OSError as error:
            print(f"error: cannot listen on {args.host}:{args.port} "
                  f"({error.strerror or error})", file=sys.stderr)
            return EXIT_CANNOT_LISTEN
        if recorder is not None:
            try:
                recorder.open()
            except OSError as error:
                print(f"error: --record {recorder.path}: cannot write it "
                      f"({error.strerror or error})", file=sys.stderr)
                return EXIT_USAGE
        if outside is not None:
            print(f"warning: serving on {args.host} with no authentication: anyone who "
                  f"reaches it is answered", file=sys.stderr)
        print(f"serving on {server.url}", flush=True)
        threading.Event().wait()  # until a signal raises _Stopped
    except _Stopped:
        pass
    finally:
        for number in previous:  # a second signal does not cut the clean-up short
            signal.signal(number, signal.SIG_IGN)
        server.stop()
        if recorder is not None:
            recorder.close()
        for number, handler in previous.items():
            signal.signal(number, handler)
    print(f"stopped after {script.answered} requests", file=sys.stderr)
    return 0
