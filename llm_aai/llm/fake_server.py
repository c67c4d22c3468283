"""A real OpenAI-compatible chat server on 127.0.0.1 that answers from a script.

It lives in the package (not only in tests) because three kinds of callers need an
offline model that speaks real HTTP: our own tests, the benchmarks (harness overhead and
concurrency speed-up with a fixed latency), and users who want to test their own agents,
prompts or runner settings without an API key. It depends only on the standard library.

It speaks two dialects: OpenAI's chat completions (``/v1/chat/completions``; point litellm
at it with model ``openai/<any-name>`` or ``hosted_vllm/<any-name>``) and Anthropic's messages
(``/v1/messages``; model ``anthropic/<any-name>``), so the default ``claude`` path through
litellm is exercised as well, from message conversion to the response parser. Pass
``api_base=server.url`` (OpenAI dialect) or ``server.root_url`` (Anthropic). Each
request consumes one entry of the script: a reply string, or a fault (:class:`RateLimit`,
:class:`ServerError`, :class:`HTTPError`, :class:`Delay`, :class:`Drop`, :class:`Trickle`,
:class:`Payload`, :class:`BadBytes`, :class:`BadUsage`). A callable
responder can replace the queue. Every request body is recorded so tests can assert
what was sent (images, full history). ``python -m llm_aai.llm.fake_server`` serves one from
the command line (``llm_aai.llm.fake_server_cli``).
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = [
    "BadBytes",
    "BadUsage",
    "Delay",
    "Cut",
    "Drop",
    "FakeChatServer",
    "HTTPError",
    "RateLimit",
    "Payload",
    "RecordedRequest",
    "ServerError",
    "Trickle",
]

MAX_BODY_BYTES = 64 * 1024 * 1024
"""The largest request body read (a turn's frames are a few hundred kilobytes): a client
that declares more, or no number, is answered with an error before anything is read."""
CHAT_PATHS = ("/v1/chat/completions", "/chat/completions")
ANTHROPIC_PATHS = ("/v1/messages", "/messages")


@dataclass(frozen=True)
class RateLimit:
    """Answer 429 with a ``Retry-After`` header.

    A number is sent as seconds (may be fractional); a string is sent as it is (an HTTP
    date, or something malformed such as ``30s``).
    """

    retry_after: float | str | None = 1.0


@dataclass(frozen=True)
class ServerError:
    """Answer with a 5xx status (transient on the client side)."""

    status: int = 500


@dataclass(frozen=True)
class HTTPError:
    """Answer with any status and message, e.g. 401 for a wrong key or 400."""

    status: int
    message: str = "fake server error"


@dataclass(frozen=True)
class Delay:
    """Sleep ``seconds`` before answering ``then`` (use it to exceed a client timeout)."""

    seconds: float
    then: str = "Go(1);"


@dataclass(frozen=True)
class Drop:
    """Close the socket without sending any response."""


@dataclass(frozen=True)
class Trickle:
    """Answer ``then``, its body sent one byte every ``seconds_per_byte``.

    No single read waits long, so a per-read timeout never fires: what a slow or hostile
    server does to a client that bounds reads rather than calls.
    """

    seconds_per_byte: float
    then: str = "Go(1);"


@dataclass(frozen=True)
class Payload:
    """Answer with ``body`` as it is (status 200 unless told).

    A malformed reply, e.g. ``{"choices": []}``, that no dialect's builder would make.
    """

    body: Any
    status: int = 200


@dataclass(frozen=True)
class BadBytes:
    """Answer 200 with the reply ``then`` whose text holds ``byte``, which is not UTF-8.

    A JSON body must be UTF-8: a server with a broken encoder, or a proxy that cut a reply
    mid-character, sends one that is not, and the client cannot decode the reply at all.
    """

    then: str = "Go(1);"
    byte: bytes = b"\xff"

    def __post_init__(self) -> None:
        try:
            self.byte.decode("utf-8")
        except UnicodeDecodeError:
            return
        raise ValueError(f"BadBytes: {self.byte!r} is valid UTF-8; give a byte that is not")


@dataclass(frozen=True)
class BadUsage:
    """Answer the reply ``then`` with ``usage`` as its token counts, whatever they are.

    Each of ``usage``'s keys replaces the count of that name (OpenAI's ``prompt_tokens``,
    ``completion_tokens``; Anthropic's ``input_tokens``, ``output_tokens``); ``usage=None``
    sends no usage at all. Negative, string, NaN or huge counts: what a broken or hostile
    server reports.
    """

    usage: dict[str, Any] | None
    then: str = "Go(1);"


@dataclass(frozen=True)
class Cut:
    """Answer ``then`` as a reply stopped at the length limit.

    ``finish_reason`` "length" (Anthropic's ``stop_reason`` "max_tokens"): what a server
    sends when ``max_tokens`` ran out mid-reply.
    """

    then: str


Action = (str | Cut | RateLimit | ServerError | HTTPError | Delay | Drop | Trickle | Payload
          | BadBytes | BadUsage)
Responder = Callable[[dict[str, Any]], Action]


@dataclass(frozen=True)
class RecordedRequest:
    """One request as the server received it.

    Attributes:
        path: URL path.
        body: parsed JSON body (model, messages, temperature, ...).
        authorization: the Authorization header, kept so tests can check which key was
            sent; never log it.
        received_at: ``time.monotonic()`` on arrival, for measuring retry waits.
        action: the scripted action that answered it.

    """

    path: str
    body: dict[str, Any]
    authorization: str | None
    received_at: float
    action: Action = field(repr=False)

    def __repr__(self) -> str:
        return f"RecordedRequest(path={self.path!r}, action={self.action!r})"


def count_tokens(text: str) -> int:
    """Deterministic token estimate (4 characters a token), so usage is never zero."""
    return max(1, len(text) // 4)


DROPPABLE = frozenset({"system", "images"})
"""What a server may lose of a request: the system prompt (a chat template without a system
role) and the images (a text-only model)."""


def _prompt_tokens(body: dict[str, Any], drops: frozenset[str] = frozenset()) -> int:
    """Estimate the prompt's tokens in either dialect (an image counts a flat 85).

    ``drops``: the parts of the request the "model" never sees, so does not count.
    """
    prompt = 0
    blocks = [{"content": body["system"]}] if "system" in body and "system" not in drops else []
    for message in blocks + list(body.get("messages", [])):
        if message.get("role") == "system" and "system" in drops:
            continue
        content = message.get("content")
        if isinstance(content, str):
            prompt += count_tokens(content)
        elif isinstance(content, list):
            for part in content:
                if part.get("type") in ("image_url", "image"):
                    prompt += 0 if "images" in drops else 85  # OpenAI's low-detail image
                else:
                    prompt += count_tokens(str(part.get("text", "")))
    return prompt


def _content_problem(content: Any, where: str) -> str | None:
    if content is None or isinstance(content, str):
        return None
    if isinstance(content, list) and all(isinstance(part, dict) for part in content):
        return None
    return f"{where} is neither text nor a list of objects"


def malformed(body: Any) -> str | None:
    """What in a request body the server cannot count or answer, or None.

    Why: the server reads these fields to count tokens; a body that is not the shape every
    client sends (not an object, messages that are not objects, a ``max_tokens`` that is no
    number) would otherwise raise in the handler, a traceback and no answer.
    """
    if not isinstance(body, dict):
        return f"the body is a JSON {type(body).__name__}, not an object"
    messages = body.get("messages", [])
    if not isinstance(messages, list):
        return "messages is not a list"
    for number, message in enumerate(messages, 1):
        if not isinstance(message, dict):
            return f"message {number} is not an object"
        problem = _content_problem(message.get("content"), f"message {number}'s content")
        if problem is not None:
            return problem
    problem = _content_problem(body.get("system"), "system")
    if problem is not None:
        return problem
    max_tokens = body.get("max_tokens")
    if max_tokens is not None and (isinstance(max_tokens, bool)
                                   or not isinstance(max_tokens, int)):
        return "max_tokens is not a whole number"
    return None


def _usage(body: dict[str, Any], reply: str,
           drops: frozenset[str] = frozenset()) -> dict[str, int]:
    prompt, completion = _prompt_tokens(body, drops), count_tokens(reply)
    return {"prompt_tokens": prompt, "completion_tokens": completion,
            "total_tokens": prompt + completion}


class FakeChatServer:
    """Threaded OpenAI-compatible server with a scripted queue of replies and faults.

    Use it as a context manager::

        with FakeChatServer(["Go(5);", RateLimit(0.5), "Turn(90);"]) as server:
            client = LiteLLMClient("openai/fake", api_base=server.url, api_key="x")

    Args:
        script: replies and faults consumed one per request, in order.
        responder: alternative to ``script``; called with each request body.
        default: reply used once the script is exhausted; if None, an exhausted script
            answers 400 (non-transient, so a test fails fast and loudly).
        latency_s: added to every request (for concurrency benchmarks).
        model_name: the ``model`` echoed in replies.
        context_window: tokens the "model" holds (prompt plus ``max_tokens``); a request
            over it is answered 400 with the message OpenAI, vLLM and llama.cpp's Python
            server send for it. None: no limit.
        drops: parts of every request the "model" loses, and so does not count in the
            prompt tokens it reports: ``"system"`` (a chat template without a system role
            drops the system prompt) and ``"images"`` (a text-only model).
        recorder: called with each request as it is recorded (from the request's thread),
            for a caller that keeps them elsewhere, e.g. the command line's ``--record``.

    """

    def __init__(
        self,
        script: Iterable[Action] = (),
        *,
        responder: Responder | None = None,
        default: str | None = None,
        latency_s: float = 0.0,
        model_name: str = "fake-model",
        context_window: int | None = None,
        drops: Iterable[str] = (),
        recorder: Callable[[RecordedRequest], None] | None = None,
    ) -> None:
        self._queue: deque[Action] = deque(script)
        self._responder = responder
        self._default = default
        self.latency_s = latency_s
        self.model_name = model_name
        self.context_window = context_window
        self.drops = frozenset(drops)
        if not self.drops <= DROPPABLE:
            raise ValueError(f"drops: {sorted(self.drops - DROPPABLE)} is not one of "
                             f"{sorted(DROPPABLE)}")
        self.requests: list[RecordedRequest] = []
        self._recorder = recorder
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._httpd: _Server | None = None
        self._thread: threading.Thread | None = None
        self.in_flight = 0
        self.max_in_flight = 0
        self.busy_s = 0.0
        """Total time spent handling requests, scripted latency and delays excluded."""

    # -- lifecycle -------------------------------------------------------------------
    def start(self, host: str = "127.0.0.1", port: int = 0) -> FakeChatServer:
        """Bind to ``host:port`` (0: a free port) and serve in a background thread.

        Raises:
            OSError: the address is taken or cannot be used.

        """
        handler = _make_handler(self)
        self._httpd = (_Server6 if ":" in host else _Server)((host, port), handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True,
                                        name="fake-chat-server")
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving; pending delays are cut short."""
        self._closing.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> FakeChatServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        """Base URL to pass as ``api_base`` for OpenAI-dialect models (includes ``/v1``)."""
        return f"{self.root_url}/v1"

    @property
    def root_url(self) -> str:
        """Base URL without ``/v1``: what litellm's Anthropic provider takes as ``api_base``."""
        if self._httpd is None:
            raise RuntimeError("FakeChatServer is not running; use it as a context manager")
        host, port = self._httpd.server_address[:2]
        return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"

    # -- scripting -------------------------------------------------------------------
    def push(self, *actions: Action) -> None:
        """Append replies or faults to the script."""
        with self._lock:
            self._queue.extend(actions)

    @property
    def remaining(self) -> int:
        """How many scripted actions have not been consumed yet."""
        with self._lock:
            return len(self._queue)

    def _next_action(self, body: dict[str, Any]) -> Action:
        if self._responder is not None:
            return self._responder(body)
        with self._lock:
            if self._queue:
                return self._queue.popleft()
        if self._default is not None:
            return self._default
        return HTTPError(400, "fake server: no scripted reply left")

    def _overflow(self, body: dict[str, Any]) -> HTTPError | None:
        """The error a request over ``context_window`` gets, else None."""
        if self.context_window is None:
            return None
        wanted = _prompt_tokens(body, self.drops) + int(body.get("max_tokens") or 0)
        if wanted <= self.context_window:
            return None
        return HTTPError(400, f"This model's maximum context length is {self.context_window} "
                              f"tokens. However, you requested {wanted} tokens "
                              f"({_prompt_tokens(body, self.drops)} in the messages, "
                              f"{int(body.get('max_tokens') or 0)} in the completion). Please "
                              f"reduce the length of the messages or completion.")

    def _record(self, path: str, body: dict[str, Any], auth: str | None,
                action: Action) -> None:
        request = RecordedRequest(path, body, auth, time.monotonic(), action)
        with self._lock:
            self.requests.append(request)
            if self._recorder is not None:  # under the lock: one request written at a time
                self._recorder(request)

    def _enter(self) -> None:
        with self._lock:
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)

    def _leave(self) -> None:
        with self._lock:
            self.in_flight -= 1

    def messages_body(self, reply: str, request: dict[str, Any],
                      cut: bool = False) -> dict[str, Any]:
        """Build the JSON Anthropic's messages endpoint returns for a non-streamed reply."""
        return {
            "id": f"msg_fake_{len(self.requests)}",
            "type": "message",
            "role": "assistant",
            "model": request.get("model", self.model_name),
            "content": [{"type": "text", "text": reply}],
            "stop_reason": "max_tokens" if cut else "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": _prompt_tokens(request, self.drops),
                      "output_tokens": count_tokens(reply)},
        }

    def completion_body(self, reply: str, request: dict[str, Any],
                        cut: bool = False) -> dict[str, Any]:
        """Build the JSON an OpenAI server returns for a non-streamed chat completion."""
        return {
            "id": f"chatcmpl-fake-{len(self.requests)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": request.get("model", self.model_name),
            "choices": [{
                "index": 0,
                "message": {"role": "assistant", "content": reply},
                "finish_reason": "length" if cut else "stop",
            }],
            "usage": _usage(request, reply, self.drops),
        }


class _Server(ThreadingHTTPServer):
    # socketserver's default listen backlog is 5: sixteen clients connecting at once would
    # see some connections dropped and retried a second later, a stall no provider adds.
    request_queue_size = 128


class _Server6(_Server):
    address_family = socket.AF_INET6


_ANTHROPIC_ERROR_TYPES = {401: "authentication_error", 403: "permission_error",
                          404: "not_found_error", 429: "rate_limit_error",
                          529: "overloaded_error"}
_OPENAI_ERROR_TYPES = {401: "invalid_api_key", 429: "rate_limit_exceeded"}


def _make_handler(server: FakeChatServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # Headers and body go out as two writes: with Nagle's algorithm on, the body waits
        # for the client's delayed ACK of the headers (~40 ms a request on Linux), a latency
        # no real provider adds and a benchmark would wrongly charge to the harness.
        disable_nagle_algorithm = True

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            """Stay silent: test output should not fill with access logs."""

        def do_GET(self) -> None:  # noqa: N802 (http.server naming)
            """List the served model, as OpenAI-compatible servers do at ``/v1/models``."""
            self.dialect = "openai"
            if self.path.rstrip("/") in ("/v1/models", "/models"):
                self._send_json(200, {"object": "list", "data": [
                    {"id": server.model_name, "object": "model", "owned_by": "fake"}]})
            else:
                self._send_json(404, {"error": {"message": f"no route {self.path}"}})

        def do_POST(self) -> None:  # noqa: N802 (http.server naming)
            self.waited = 0.0
            started = time.perf_counter()
            try:
                self._handle()
            finally:
                with server._lock:
                    server.busy_s += time.perf_counter() - started - self.waited

        def _wait(self, seconds: float) -> bool:
            """Sleep ``seconds`` unless the server closes first; True if it closed."""
            started = time.perf_counter()
            closed = server._closing.wait(seconds)
            self.waited += time.perf_counter() - started
            return closed

        def _handle(self) -> None:
            path = self.path.rstrip("/")
            self.dialect = "anthropic" if path in ANTHROPIC_PATHS else "openai"
            declared = self.headers.get("Content-Length") or "0"
            length = int(declared) if declared.isascii() and declared.isdigit() else -1
            if not 0 <= length <= MAX_BODY_BYTES:  # read nothing: the connection is dropped
                self.close_connection = True
                self._send_error(413 if length > 0 else 400,
                                 f"Content-Length {declared[:20]!r}: a number of bytes up "
                                 f"to {MAX_BODY_BYTES} is wanted")
                return
            raw = self.rfile.read(length)
            if path not in CHAT_PATHS + ANTHROPIC_PATHS:
                self._send_json(404, {"error": {"message": f"no route {self.path}"}})
                return
            try:
                body = json.loads(raw or b"{}")
            except json.JSONDecodeError as exc:
                self._send_error(400, f"invalid JSON: {exc}")
                return
            problem = malformed(body)
            if problem is not None:  # what no client sends: refused, no scripted action used
                self._send_error(400, f"malformed request: {problem}")
                return
            overflow = server._overflow(body)
            if overflow is not None:  # the model never sees it: no scripted action is used
                server._record(self.path, body, None, overflow)
                self._perform(overflow, body)
                return
            action = server._next_action(body)
            auth = self.headers.get("Authorization") or self.headers.get("x-api-key")
            server._record(self.path, body, auth, action)
            server._enter()
            try:
                if server.latency_s and self._wait(server.latency_s):
                    return
                self._perform(action, body)
            finally:
                server._leave()

        def _perform(self, action: Action, body: dict[str, Any]) -> None:
            if isinstance(action, str):
                self._send_reply(action, body)
            elif isinstance(action, Cut):
                self._send_reply(action.then, body, cut=True)
            elif isinstance(action, RateLimit):
                headers = {}
                if isinstance(action.retry_after, str):
                    headers["Retry-After"] = action.retry_after
                elif action.retry_after is not None:
                    headers["Retry-After"] = f"{action.retry_after:g}"
                self._send_error(429, "rate limited", headers)
            elif isinstance(action, ServerError):
                self._send_error(action.status, "internal error")
            elif isinstance(action, HTTPError):
                self._send_error(action.status, action.message)
            elif isinstance(action, Delay):
                if not self._wait(action.seconds):
                    self._send_reply(action.then, body)
            elif isinstance(action, Drop):
                self.close_connection = True
                self.connection.close()
            elif isinstance(action, Trickle):
                build = (server.messages_body if self.dialect == "anthropic"
                         else server.completion_body)
                self._send_json(200, build(action.then, body), trickle=action.seconds_per_byte)
            elif isinstance(action, Payload):
                self._send_json(action.status, action.body)
            elif isinstance(action, BadUsage):
                build = (server.messages_body if self.dialect == "anthropic"
                         else server.completion_body)
                reply = build(action.then, body)
                if action.usage is None:
                    del reply["usage"]
                else:
                    reply["usage"].update(action.usage)
                self._send_json(200, reply)
            elif isinstance(action, BadBytes):
                build = (server.messages_body if self.dialect == "anthropic"
                         else server.completion_body)
                marker = "\u0000BAD-BYTES\u0000"  # escaped in the JSON: found once, replaced
                data = json.dumps(build(action.then + marker, body)).encode()
                self._send_data(200, data.replace(json.dumps(marker)[1:-1].encode(),
                                                  action.byte, 1))
            else:
                raise TypeError(f"unknown scripted action {action!r}")

        def _send_reply(self, reply: str, body: dict[str, Any], cut: bool = False) -> None:
            build = server.messages_body if self.dialect == "anthropic" else server.completion_body
            self._send_json(200, build(reply, body, cut))

        def _send_error(self, status: int, message: str,
                        headers: dict[str, str] | None = None) -> None:
            """An error body in the dialect's own shape, its type the one the status implies."""
            if self.dialect == "anthropic":
                kind = _ANTHROPIC_ERROR_TYPES.get(status, "api_error" if status >= 500
                                                  else "invalid_request_error")
                payload = {"type": "error", "error": {"type": kind, "message": message}}
            else:
                kind = _OPENAI_ERROR_TYPES.get(status, "server_error" if status >= 500
                                               else "invalid_request_error")
                payload = {"error": {"message": message, "type": kind, "code": kind}}
            self._send_json(status, payload, headers)

        def _send_json(self, status: int, payload: Any,
                       headers: dict[str, str] | None = None, *, trickle: float = 0.0) -> None:
            self._send_data(status, json.dumps(payload).encode(), headers, trickle=trickle)

        def _send_data(self, status: int, data: bytes,
                       headers: dict[str, str] | None = None, *, trickle: float = 0.0) -> None:
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for key, value in (headers or {}).items():
                    self.send_header(key, value)
                self.end_headers()
                if not trickle:
                    self.wfile.write(data)
                for index in range(len(data) if trickle else 0):
                    self.wfile.write(data[index:index + 1])
                    self.wfile.flush()
                    if self._wait(trickle):
                        return  # the server is stopping
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (timeout); nothing left to tell it

    return Handler


if __name__ == "__main__":  # python -m llm_aai.llm.fake_server: see fake_server_cli
    import sys

    from llm_aai.llm.fake_server_cli import main

    sys.exit(main())
