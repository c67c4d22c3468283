"""The web app participants play in: its routes, and nothing else.

Routes (every other path is a 404, and nothing is served from a folder, so no request can
name a file):

* ``GET /`` the instructions and the participant id (``?control=keys`` for the keyboard);
* ``POST /api/sessions`` start a session (``{"participant", "interface"}``); the answer sets
  the session's cookie, a secret token that is the only way to its run;
* ``GET /play`` the page of the cookie's session; ``GET /api/state`` what it shows now;
* ``POST /api/script`` a script (``{"script"}``, at most ``MAX_SCRIPT_BYTES`` of UTF-8);
  ``POST /api/next`` on to the next level;
* ``WS /ws/keys`` the keyboard: the page sends the arrow keys held, the server sends each
  new frame;
* ``GET /static/human.js`` and ``/static/human.css``.

Requests that change something must come from the app's own pages: a JSON body (which a
cross-site form cannot send), the cookie ``SameSite=Strict``, and an ``Origin`` naming this
server when the browser gives one (a WebSocket's always does). A body is read up to
``MAX_BODY_BYTES`` and must be the endpoint's JSON object exactly (``StartBody``,
``ScriptBody``); anything else (not UTF-8, not JSON, nested too deep, a number out of range,
another kind or type, a field unknown) is a 400 naming what is wrong, never a 500.
"""

from __future__ import annotations

import asyncio
import base64
import json
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import asdict
from importlib import resources
from typing import Any, Literal, TypeVar
from urllib.parse import urlsplit

import anyio.to_thread
from jinja2 import Environment, PackageLoader, select_autoescape
from pydantic import BaseModel, ConfigDict, ValidationError
from starlette.applications import Starlette
from starlette.datastructures import Headers
from starlette.middleware import Middleware
from starlette.requests import HTTPConnection, Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

from llm_aai.hosts import host_allowed, same_authority
from llm_aai.human.keyboard import TICK_S
from llm_aai.human.session import Session, SessionError, Sessions, View
from llm_aai.human.study import StudyError
from llm_aai.prompts.modes import load_prompt_for_mode

__all__ = ["COOKIE", "MAX_KEY_EVENTS_PER_S", "MAX_SCRIPT_BYTES", "ScriptBody", "StartBody",
           "make_app"]

COOKIE = "llm_aai_session"
MAX_SCRIPT_BYTES = 16_384
"""The longest script taken (bytes of UTF-8): far above any script a person types, and a
bound on what one request can make the parser read."""
MAX_BODY_BYTES = MAX_SCRIPT_BYTES + 1024
MAX_KEY_EVENTS_PER_S = 60
"""Key events taken from one page in a second; more are dropped, and the page is told."""
MAX_KEY_MESSAGE = 512
SETTLE_TIMEOUT_S = 60.0
"""How long a request waits for a script to be played before answering with the view as it is
(the page then asks again)."""
HEARTBEAT_S = 5.0
"""How often a script page tells the server it is open (at most; a third of the take-over
time when that is shorter)."""
STATIC = {"human.js": "text/javascript; charset=utf-8", "human.css": "text/css; charset=utf-8"}
SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; "
                               "img-src 'self' data: blob:; connect-src 'self'; "
                               "form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}


class _Body(BaseModel):
    """A request's JSON object: its fields exactly, of their types (no coercion)."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class StartBody(_Body):
    """``POST /api/sessions``."""

    participant: str
    interface: Literal["script", "keys"] = "script"


class ScriptBody(_Body):
    """``POST /api/script``."""

    script: str


BodyT = TypeVar("BodyT", bound=_Body)


def make_app(sessions: Sessions, allowed_hosts: Sequence[str] = ("*",)) -> Starlette:
    """The app serving ``sessions``' study.

    Args:
        sessions: the study's sessions.
        allowed_hosts: the names a request's ``Host`` may give (``"*"``: any). A server on
            the loopback takes only its own names, so a page of another site whose name was
            pointed at 127.0.0.1 (DNS rebinding) is refused.

    """
    templates = Environment(loader=PackageLoader("llm_aai.human", "templates"),
                            autoescape=select_autoescape(["html"]))
    study = sessions.study
    # a script page asks for its session this often, so an open page is never abandoned
    heartbeat_ms = round(min(HEARTBEAT_S, sessions.takeover_after / 3) * 1000)
    system_prompt = load_prompt_for_mode(study.base.prompt, study.base.modes).system_text

    def page(name: str, status: int = 200, **context: Any) -> HTMLResponse:
        return HTMLResponse(templates.get_template(name).render(**context), status,
                            headers=SECURITY_HEADERS)

    async def index(request: Request) -> Response:
        control = request.query_params.get("control")
        interface = "keys" if control == "keys" else "script"
        if control not in (None, "keys", "script"):
            return page("index.html", 400, interface="script", levels=len(study.tasks),
                        system_prompt=system_prompt,
                        error=f"control must be keys or script, not {control[:40]!r}")
        return page("index.html", interface=interface, levels=len(study.tasks),
                    system_prompt=system_prompt, error=None)

    async def play(request: Request) -> Response:
        session = sessions.get(request.cookies.get(COOKIE))
        if session is None:
            return RedirectResponse("/", 303, headers=SECURITY_HEADERS)
        return page("play.html", interface=session.interface, participant=session.participant,
                    tick_ms=round(TICK_S * 1000), heartbeat_ms=heartbeat_ms)

    async def start(request: Request) -> Response:
        body = await _json_body(request, StartBody)
        if isinstance(body, Response):
            return body
        try:
            session = await anyio.to_thread.run_sync(sessions.open, body.participant,
                                                     body.interface)
        except StudyError as error:
            return _error(409, str(error))
        response = JSONResponse({"play": "/play"}, headers=SECURITY_HEADERS)
        response.set_cookie(COOKIE, session.token, httponly=True, samesite="strict", path="/")
        return response

    async def state(request: Request) -> Response:
        session = sessions.get(request.cookies.get(COOKIE))
        if session is None:
            return _error(401, "no session: start one on the first page")
        return JSONResponse(_view_json(session.view), headers=SECURITY_HEADERS)

    async def script(request: Request) -> Response:
        session = sessions.get(request.cookies.get(COOKIE))
        if session is None:
            return _error(401, "no session: start one on the first page")
        body = await _json_body(request, ScriptBody)
        if isinstance(body, Response):
            return body
        text = body.script
        if len(text.encode("utf-8", "surrogatepass")) > MAX_SCRIPT_BYTES:
            return _error(413, f"the script is longer than {MAX_SCRIPT_BYTES:,} bytes; "
                               "nothing was played")
        return await _answer(session, lambda: session.submit_script(text))

    async def next_level(request: Request) -> Response:
        session = sessions.get(request.cookies.get(COOKIE))
        if session is None:
            return _error(401, "no session: start one on the first page")
        if (refused := _foreign(request)) is not None:
            return refused
        return await _answer(session, session.next_level)

    async def static(request: Request) -> Response:
        name = request.path_params["name"]
        if name not in STATIC:
            return _error(404, "not found")
        data = resources.files("llm_aai.human").joinpath("static", name).read_bytes()
        return Response(data, media_type=STATIC[name], headers=SECURITY_HEADERS)

    async def keys(websocket: WebSocket) -> None:
        await _play_keys(websocket, sessions)

    app = Starlette(middleware=[Middleware(_HostCheck, allowed=tuple(allowed_hosts))], routes=[
        Route("/", index),
        Route("/play", play),
        Route("/api/sessions", start, methods=["POST"]),
        Route("/api/state", state),
        Route("/api/script", script, methods=["POST"]),
        Route("/api/next", next_level, methods=["POST"]),
        Route("/static/{name}", static),
        WebSocketRoute("/ws/keys", keys),
    ])
    app.router.redirect_slashes = False  # a path is a route or a 404, never a redirect
    return app


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status, headers=SECURITY_HEADERS)


class _HostCheck:
    """Refuse a request whose ``Host`` is not one of the server's names (``hosts``).

    A plain ASGI middleware, for HTTP and WebSockets alike: Starlette's own reads the host as
    what comes before the first colon, which cannot take a bracketed IPv6 address.
    """

    def __init__(self, app, allowed: tuple[str, ...]) -> None:
        self.app = app
        self.allowed = allowed

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] not in ("http", "websocket") or host_allowed(
                Headers(scope=scope).get("host"), self.allowed):
            await self.app(scope, receive, send)
        elif scope["type"] == "http":
            await _error(400, "this server does not answer to that host name")(
                scope, receive, send)
        else:
            await send({"type": "websocket.close", "code": 4400,
                        "reason": "this server does not answer to that host name"})


def _foreign(connection: HTTPConnection) -> Response | None:
    """A 403 for a request whose ``Origin`` is another site (None: it may go on)."""
    origin = connection.headers.get("origin")
    if origin is not None and not same_authority(urlsplit(origin).netloc,
                                                 connection.headers.get("host")):
        return _error(403, "requests must come from the app's own pages")
    return None


async def _json_body(request: Request, kind: type[BodyT]) -> BodyT | Response:
    """The request's body as ``kind``, read up to ``MAX_BODY_BYTES``, or the error to answer."""
    if (refused := _foreign(request)) is not None:
        return refused
    if request.headers.get("content-type", "").split(";")[0].strip() != "application/json":
        return _error(415, "send JSON (content-type application/json)")
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > MAX_BODY_BYTES:
        return _error(413, f"the request is longer than {MAX_SCRIPT_BYTES:,} bytes of script; "
                           "nothing was played")
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_BODY_BYTES:
            return _error(413, f"the request is longer than {MAX_SCRIPT_BYTES:,} bytes of "
                               "script; nothing was played")
    try:
        text = bytes(body).decode("utf-8")
    except UnicodeDecodeError:
        return _error(400, "the request is not UTF-8 text; nothing was played")
    try:
        return kind.model_validate_json(text)
    except ValidationError as error:
        return _error(400, _body_problem(error, kind))


def _body_problem(error: ValidationError, kind: type[_Body]) -> str:
    """One line for a body that is not ``kind``: the first problem, and what to send."""
    first = error.errors(include_url=False, include_input=False)[0]
    where = ".".join(str(part) for part in first["loc"])
    problem = first["msg"] if first["type"] == "json_invalid" else (
        f"{where}: {first['msg']}" if where else first["msg"])
    fields = ", ".join(f'"{name}"' for name in kind.model_fields)
    return f"{problem[:160]} (send a JSON object with {fields}); nothing was played"


async def _answer(session: Session, act) -> Response:
    """Do ``act`` and answer with the view once the session waits for the participant again."""
    try:
        version = act()
    except SessionError as error:
        return _error(409, str(error))
    view = await anyio.to_thread.run_sync(session.wait_settled, version, SETTLE_TIMEOUT_S)
    return JSONResponse(_view_json(view), headers=SECURITY_HEADERS)


def _view_json(view: View) -> dict[str, Any]:
    data = asdict(view)
    data["images"] = [_data_url(image) for image in view.images]
    return data


def _media_type(image: bytes) -> str:
    return "image/png" if image.startswith(b"\x89PNG") else "image/jpeg"


def _data_url(image: bytes) -> str:
    return f"data:{_media_type(image)};base64,{base64.b64encode(image).decode('ascii')}"


async def _play_keys(websocket: WebSocket, sessions: Sessions) -> None:
    """One page's keyboard connection: key events in, a frame out for every step."""
    session = sessions.get(websocket.cookies.get(COOKIE))
    if _foreign(websocket) is not None or session is None or session.interface != "keys":
        await websocket.close(code=4403, reason="no keyboard session for this page")
        return
    await websocket.accept()
    loop = asyncio.get_running_loop()
    latest: list[View] = []
    fresh = asyncio.Event()

    def on_view(view: View) -> None:  # the session's thread: hand over the newest view only
        def take() -> None:
            latest[:] = [view]
            fresh.set()
        loop.call_soon_threadsafe(take)

    unsubscribe = session.subscribe(on_view)
    on_view(session.view)
    session.clock.connect()
    sender = asyncio.create_task(_send_views(websocket, latest, fresh))
    try:
        await _read_keys(websocket, session)
    finally:
        session.clock.disconnect()
        session.touch()  # abandoned counts from here
        unsubscribe()
        sender.cancel()


async def _send_views(websocket: WebSocket, latest: list[View], fresh: asyncio.Event) -> None:
    """Send each newest view: its fields as JSON, then its last image.

    Views in between are skipped when the page reads slower than the world steps.
    """
    while True:
        await fresh.wait()
        fresh.clear()
        view = latest[0]
        meta = {key: value for key, value in asdict(view).items() if key != "images"}
        meta["type"] = "view"
        meta["image"] = _media_type(view.images[-1]) if view.images else None
        await websocket.send_text(json.dumps(meta))
        if view.images:
            await websocket.send_bytes(view.images[-1])


async def _read_keys(websocket: WebSocket, session: Session) -> None:
    """Take the page's key events until it goes, dropping a flood with a warning."""
    recent: deque[float] = deque()
    warned = 0.0
    while True:
        try:
            message = await websocket.receive()
        except WebSocketDisconnect:
            return
        if message["type"] == "websocket.disconnect":
            return
        now = time.monotonic()
        while recent and recent[0] < now - 1.0:
            recent.popleft()
        problem = None
        text = message.get("text")
        if text is None:
            problem = "key events are JSON text, not binary"
        elif len(text) > MAX_KEY_MESSAGE:
            problem = f"a key event is at most {MAX_KEY_MESSAGE} characters"
        elif len(recent) >= MAX_KEY_EVENTS_PER_S:
            problem = (f"more than {MAX_KEY_EVENTS_PER_S} key events in a second: the extra "
                       "ones are ignored")
        if problem is None:
            recent.append(now)
            problem = _press(session, text)
        if problem is not None and now - warned > 1.0:  # one warning a second at most
            warned = now
            await websocket.send_text(json.dumps({"type": "warning", "message": problem}))


def _press(session: Session, text: str) -> str | None:
    """Apply one key event (``{"held": [...], "seq": n}``); the problem with it, if any."""
    try:
        event = json.loads(text)
    except json.JSONDecodeError:
        return "a key event is JSON: {\"held\": [\"ArrowUp\"], \"seq\": 1}"
    held, sequence = (event.get("held"), event.get("seq")) if isinstance(event, dict) else (
        None, None)
    if not (isinstance(held, list) and len(held) <= 4 and all(isinstance(k, str) for k in held)
            and isinstance(sequence, int) and not isinstance(sequence, bool)):
        return "a key event is {\"held\": [up to 4 key names], \"seq\": a whole number}"
    session.clock.press(held, sequence)
    return None
