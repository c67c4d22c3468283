"""One participant's session: their run, played level by level on its own thread and simulator.

The episode loop is the runner's (``OpenRun.play``: ``EpisodeRunner`` driving
``protocol.Episode``), so a participant is held to the rules a model is, by construction. The
participant is the run's agent (``BrowserParticipant``): each time the runner asks it for a
reply it shows the page what a model would be sent (the images, the text before and after
them) and waits for the page's script, or, with the keyboard, for the next step of the
real-time clock. What the page shows is the session's ``View``, replaced as a whole on every
change and handed to whoever subscribed (a page's connection).

A session that fails (a simulator error, a log that cannot be written) stops alone: its thread
catches the error, the page says so, and the other sessions play on; its finished levels are
sealed in its run already.

A session whose page went away (a closed browser, a lost cookie) is *abandoned* once no page
has asked for it for ``takeover_after`` seconds. Then its participant id may start a session
again, which takes the old one over (``Sessions.open``): the old session is closed, the level
it was playing is set aside as ``<episode>.attempt-N`` with every reply it holds, and the new
session plays on from that level in the same run. An abandoned session also gives up its place
when the server is full. Before the timeout a second start under the id is refused, so nobody
takes a session from a participant who is still playing.
"""

from __future__ import annotations

import secrets
import sys
import threading
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from llm_aai.agents.base import AgentReply, PriorTurn, TurnInput
from llm_aai.human.keyboard import KeyboardClock
from llm_aai.human.study import Study, StudyError, check_participant_id
from llm_aai.logs.store import EPISODES, read_turns
from llm_aai.runner.app import OpenRun

__all__ = ["SETTLED", "BrowserParticipant", "Session", "SessionError", "Sessions", "View"]

STARTING, YOUR_TURN, PLAYING, LEVEL_OVER, DONE, STOPPED = (
    "starting", "your_turn", "playing", "level_over", "done", "stopped")
SETTLED = frozenset({YOUR_TURN, LEVEL_OVER, DONE, STOPPED})
"""Phases that wait for the participant (or for nobody): a page waits for one of them."""


class SessionError(Exception):
    """What the participant asked cannot be done now (said to the page as it is)."""


@dataclass(frozen=True)
class View:
    """Everything the page shows, at one moment.

    Attributes:
        version: grows by one with every change.
        phase: ``starting`` (a level is set up), ``your_turn`` (a script is awaited),
            ``playing`` (a reply is being played, or the keyboard's clock runs),
            ``level_over``, ``done`` (every level played) or ``stopped`` (an error).
        level: the level being played, 1 for the first; levels: how many there are.
        replies: replies played this level (scripts, or steps with the keyboard).
        max_scripts: the script cap (None with the keyboard).
        images: the images a model would be sent now, in order (the frame files of the log).
        preamble: the text a model would be sent before them (feedback on an invalid script).
        text: the text after them (the health).
        message: the level's outcome, or why the session stopped.
        applied: with the keyboard, the number of the last key event the last step acted on.

    """

    version: int
    phase: str
    participant: str
    interface: str
    level: int
    levels: int
    replies: int = 0
    max_scripts: int | None = None
    images: tuple[bytes, ...] = ()
    preamble: str = ""
    text: str = ""
    message: str = ""
    applied: int = 0


class BrowserParticipant:
    """The run's agent: shows each turn to the session's page and returns the page's reply.

    ``name`` is ``human``, the built-in agent a person plays; the manifest says which
    participant and interface.
    """

    name = "human"

    def __init__(self, session: Session) -> None:
        self._session = session

    def start_episode(self, system_prompt: str, seed: int,
                      prelude: Sequence[PriorTurn] = ()) -> None:
        """Nothing to forget: the instructions page showed the prompt before the first level."""

    def act(self, turn: TurnInput) -> AgentReply:
        """Show the turn, then wait for the script (or the clock's next step).

        Raises:
            EOFError: the session was closed while waiting (the episode stays unfinished).

        """
        started = time.perf_counter()
        reply = self._session.reply_to(turn)
        return AgentReply(text=reply, model=self.name, latency_s=time.perf_counter() - started)


@dataclass
class Session:
    """A participant's run, played on its own thread.

    Attributes:
        token: the secret that names the session (the page's cookie).
        participant: the participant's id.
        interface: ``script`` or ``keys``.
        run: the participant's open run.
        order: the task ids in the order played.

    """

    token: str
    participant: str
    interface: str
    run: OpenRun
    order: tuple[str, ...]
    clock: KeyboardClock = field(default_factory=KeyboardClock)
    _changed: threading.Condition = field(default_factory=threading.Condition)
    _view: View | None = None
    _scripts: list[str] = field(default_factory=list)
    _next_wanted: bool = False
    _closed: str | None = None
    _listeners: list[Callable[[View], None]] = field(default_factory=list)
    _thread: threading.Thread | None = None
    _seen: float = field(default_factory=time.monotonic)

    def __post_init__(self) -> None:
        cap = self.run.config.protocol.max_scripts
        self._view = View(0, STARTING, self.participant, self.interface,
                          self._first_level_left(), len(self.order), max_scripts=cap)

    def touch(self) -> None:
        """A page asked for the session now (it is not abandoned)."""
        self._seen = time.monotonic()

    @property
    def idle_s(self) -> float:
        """Seconds since a page last asked for the session (0 while a keyboard is connected)."""
        return 0.0 if self.clock.connected else time.monotonic() - self._seen

    @property
    def view(self) -> View:
        """What the page shows now."""
        assert self._view is not None
        return self._view

    @property
    def live(self) -> bool:
        """The session still plays (or waits for its participant)."""
        return self.view.phase not in (DONE, STOPPED)

    def start(self) -> None:
        """Play the levels on the session's own thread."""
        self._thread = threading.Thread(target=self._play_all, daemon=True,
                                        name=f"human-{self.interface}-{self.participant}")
        self._thread.start()

    def join(self, timeout: float | None = None) -> None:
        """Wait for the session's thread to end."""
        if self._thread is not None:
            self._thread.join(timeout)

    # --- what the page does -------------------------------------------------------------

    def submit_script(self, script: str) -> int:
        """Hand the awaited script to the episode; returns the view's version it answered.

        Raises:
            SessionError: no script is awaited now (the last one still plays, the level is
                over, or the session ended).

        """
        with self._changed:
            view = self.view
            if self.interface != "script":
                raise SessionError("this session plays with the arrow keys, not scripts")
            if view.phase != YOUR_TURN or self._scripts:
                raise SessionError(f"no script is awaited now (the session is {view.phase})")
            self._scripts.append(script)
            self._changed.notify_all()
            return view.version

    def next_level(self) -> int:
        """Go on to the next level once the last one is over; returns the version answered.

        Raises:
            SessionError: no level is over now.

        """
        with self._changed:
            view = self.view
            if view.phase != LEVEL_OVER:
                raise SessionError(f"no level is over now (the session is {view.phase})")
            self._next_wanted = True
            self._changed.notify_all()
            return view.version

    def subscribe(self, listener: Callable[[View], None]) -> Callable[[], None]:
        """Call ``listener`` (from the session's thread) with every new view; returns the undo."""
        with self._changed:
            self._listeners.append(listener)
        return lambda: self._unsubscribe(listener)

    def wait_settled(self, after: int, timeout: float) -> View:
        """The first view newer than ``after`` that waits for the participant.

        When ``timeout`` seconds pass first, the view as it is then.
        """
        deadline = time.monotonic() + timeout
        settled = SETTLED | {PLAYING} if self.interface == "keys" else SETTLED  # the clock runs
        with self._changed:
            while not (self.view.version > after and self.view.phase in settled):
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self._changed.wait(left)
            return self.view

    def close(self, reason: str) -> None:
        """End the session: a level in play stays unfinished in the run (never sealed)."""
        with self._changed:
            self._closed = reason
            self._changed.notify_all()
        self.clock.close(reason)

    # --- what the episode's thread does ------------------------------------------------

    def reply_to(self, turn: TurnInput) -> str:
        """Show ``turn`` and wait for its reply (see ``BrowserParticipant.act``)."""
        images = tuple(Path(path).read_bytes() for path in turn.image_paths)
        if self.interface == "keys":
            self._publish(phase=PLAYING, images=images, preamble=turn.preamble, text=turn.text,
                          applied=self.clock.applied)
            reply = self.clock.next_reply()
            self._publish(phase=PLAYING, replies=self.view.replies + 1)
            return reply
        self._publish(phase=YOUR_TURN, images=images, preamble=turn.preamble, text=turn.text)
        return self._wait_for_script()

    def _wait_for_script(self) -> str:
        """The page's script, taken as the phase leaves ``your_turn``, in one step.

        So a second script sent meanwhile is refused, never kept for a turn not yet shown.
        """
        with self._changed:
            while not self._scripts:
                if self._closed is not None:
                    raise EOFError(self._closed)
                self._changed.wait()
            self._update(phase=PLAYING, replies=self.view.replies + 1)
            return self._scripts.pop()

    def _wait_for_next(self) -> None:
        with self._changed:
            while not self._next_wanted:
                if self._closed is not None:
                    raise EOFError(self._closed)
                self._changed.wait()
            self._next_wanted = False

    def _first_level_left(self) -> int:
        """The number of the first level the run has not finished (1 for a new run)."""
        return next((level for level, task_id in enumerate(self.order, start=1)
                     if self.run.finished(task_id, 1) is None), len(self.order))

    def _play_all(self) -> None:
        agent = BrowserParticipant(self)
        played = False
        try:
            for level, task_id in enumerate(self.order, start=1):
                if self.run.finished(task_id, 1) is not None:
                    continue  # finished in an earlier session of this participant
                if played:
                    self._wait_for_next()
                played = True
                self.clock.new_level()
                self._publish(phase=STARTING, level=level, replies=0, images=(), preamble="",
                              text="", message="")
                spec = self.run.spec(task_id, 1)
                self.run.store.set_aside_interrupted_replies(spec.episode_id)
                self.run.play(spec, agent)
                last = level == len(self.order)
                self._show_level_end(spec.episode_id, DONE if last else LEVEL_OVER)
        except EOFError as closed:
            self._publish(phase=STOPPED, message=f"The session was closed ({closed}). The "
                                                 "levels you finished are saved.")
        except Exception as error:  # noqa: BLE001 - one session's failure stops it alone
            print(f"session of participant {self.participant} ({self.interface}) stopped: "
                  f"{type(error).__name__}: {error}", file=sys.stderr)
            traceback.print_exc()
            self._publish(phase=STOPPED, message=f"The session stopped on an error "
                                                 f"({type(error).__name__}: {error}). The "
                                                 "levels you finished are saved; please tell "
                                                 "the researcher.")
        finally:
            self.run.close()  # its lock released: a session taking this one over reopens it

    def _show_level_end(self, episode_id: str, phase: str) -> None:
        """The level's last message as its log holds it: the final frame and the outcome."""
        directory = self.run.run_dir / EPISODES / episode_id
        last = read_turns(directory)[-1]
        images = tuple((directory / path).read_bytes() for path in last.sent_images)
        self._publish(phase=phase, images=images, preamble="", text="",
                      message=last.sent_text)

    def _publish(self, **changes) -> None:
        with self._changed:
            self._update(**changes)

    def _update(self, **changes) -> None:
        """Replace the view (holding ``_changed``) and tell every listener."""
        self._view = replace(self.view, version=self.view.version + 1, **changes)
        self._changed.notify_all()
        for listener in list(self._listeners):
            listener(self._view)

    def _unsubscribe(self, listener: Callable[[View], None]) -> None:
        with self._changed:
            if listener in self._listeners:
                self._listeners.remove(listener)


class Sessions:
    """The study's live sessions, by their secret token.

    Args:
        study: what every session plays.
        max_live: the most sessions playing at once (each holds a simulator while it plays).
        takeover_after: seconds with no page after which a session is abandoned: its
            participant id may take it over, and a newcomer may take its place when the
            server is full.

    """

    def __init__(self, study: Study, max_live: int = 8, takeover_after: float = 30.0) -> None:
        self.study = study
        self.max_live = max_live
        self.takeover_after = takeover_after
        self._lock = threading.Lock()
        self._by_token: dict[str, Session] = {}
        self._opening: set[tuple[str, str]] = set()

    def open(self, participant: str, interface: str) -> Session:
        """Start a session: the participant's run is made (or continued) and a level set up.

        A live session under the same id and interface is taken over once it is abandoned
        (see the module); so is the longest-abandoned one when the server is full.

        Raises:
            StudyError: a bad participant id, one whose session is still in use or whose run
                has every level finished, or too many sessions playing.

        """
        participant = check_participant_id(participant)
        self.study.config(interface)  # a bad interface is refused before anything is made
        key = (participant, interface)
        with self._lock:
            replaced = self._to_replace(participant, key)
            self._opening.add(key)
        try:  # the run is made outside the lock: other sessions' requests go on meanwhile
            if replaced is not None:
                self._retire(replaced, participant)
            run = self.study.open(participant, interface)
            session = Session(secrets.token_urlsafe(32), participant, interface, run,
                              self.study.order_for(participant))
            with self._lock:
                self._by_token[session.token] = session
        finally:
            with self._lock:
                self._opening.discard(key)
        session.start()
        return session

    def _to_replace(self, participant: str, key: tuple[str, str]) -> Session | None:
        """The session a start under ``key`` takes over (holding ``_lock``), or None.

        Raises:
            StudyError: the start is refused.

        """
        live = [s for s in self._by_token.values() if s.live]
        same = next((s for s in live if (s.participant, s.interface) == key), None)
        if key in self._opening:
            raise StudyError(f"participant {participant} is starting a session already")
        if same is not None:
            wait = self.takeover_after - same.idle_s
            if wait > 0:
                raise StudyError(
                    f"participant {participant} has a session open already (in another tab "
                    "or browser); continue there, or, if that browser was closed, start again "
                    f"in {wait:.0f} s to take the session over here")
            return same
        if len(live) + len(self._opening) < self.max_live:
            return None
        abandoned = sorted((s for s in live if s.idle_s >= self.takeover_after),
                           key=lambda s: -s.idle_s)
        if not abandoned:
            raise StudyError(f"{len(live)} sessions are playing, the most this server takes; "
                             "try again when one has finished")
        return abandoned[0]

    def _retire(self, old: Session, by: str) -> None:
        """Close an abandoned session and wait for its run to be released.

        Its level in play stays unfinished in its run, with its replies; the next session of
        its participant sets it aside as an attempt and plays the level again.
        """
        with self._lock:
            self._by_token.pop(old.token, None)
        reason = ("taken over by a new start under this participant id"
                  if old.participant == by else "its place was given to another participant "
                  "after it had no page for a while")
        old.close(reason)
        old.join(30.0)
        print(f"session of participant {old.participant} ({old.interface}) closed after "
              f"{old.idle_s:.0f} s with no page: {reason}", file=sys.stderr, flush=True)

    def get(self, token: str | None) -> Session | None:
        """The session of ``token`` (marked as in use now), or None for a missing or unknown one."""
        if not token:
            return None
        with self._lock:
            session = self._by_token.get(token)
        if session is not None:
            session.touch()
        return session

    def close_all(self, reason: str, timeout: float = 5.0) -> None:
        """Close every session and wait a little for their threads to end."""
        with self._lock:
            sessions = list(self._by_token.values())
        for session in sessions:
            session.close(reason)
        for session in sessions:
            session.join(timeout)
