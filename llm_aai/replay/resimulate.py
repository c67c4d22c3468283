"""Re-execute a logged episode in the embedded simulator and check it against its log.

The embedded simulator is deterministic, so an embedded run's log must be reproducible to the
bit: the same arena file (verified by the checksum in the run's manifest), the same reset seed,
the protocol's start (``llm_aai.protocol.start_episode``: no-ops after reset, the initial
observations and their no-ops), then each turn's logged ``[move, turn]`` actions. After every
turn the simulated health, reward, steps, reward events, end flag and agent state are compared
with the turn record, and the frame the simulator renders is compared pixel for pixel with the
image the agent was shown next. A difference means the log was altered, the arena changed, or
the simulator lost determinism.

The same pass can render the top-down overview at every shown frame (the log has none), which
is how ``--overview`` animations get their second panel, and can ask the simulator about its state
at the instant each turn's observation was taken (``probe``): that is how ``llm_aai.grounding``
learns what the agent could truly see when it wrote each Think, without the log storing it.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from llm_aai.arena import ArenaError, resolve_arena_path
from llm_aai.arena.checksum import file_sha256
from llm_aai.env import AnimalAIEnv
from llm_aai.filmstrip import filmstrip
from llm_aai.frames import FrameFormat, read_frame
from llm_aai.logs.events import logged_events
from llm_aai.logs.schema import RunManifest, SchemaError, TurnRecord
from llm_aai.protocol import combine, execute_actions, start_episode
from llm_aai.protocol.modes import ModeSettings
from llm_aai.protocol.observe_every import frame_steps
from llm_aai.replay.episode import ArenaMissingError, LoggedEpisode, ReplayInputError
from llm_aai.settings import ResolvedRun, settings_of

HEALTH_DECIMALS = 4
"""The runner logs health rounded to this many decimals, so the simulated one is rounded too."""
TOLERANCE = 1e-6
"""Health (as logged, rounded) and rewards must agree this closely."""
STATE_TOLERANCE = 1e-9

FrameKey = tuple[int, int]
"""``(turn, index)`` of a shown image, as in ``ShownFrame``."""


@dataclass(frozen=True)
class Check:
    """One compared quantity of a turn."""

    name: str
    ok: bool
    logged: str
    simulated: str

    def describe(self) -> str:
        """``name ok`` or ``name: logged X, simulated Y``."""
        if self.ok:
            return f"{self.name} ok"
        return f"{self.name}: logged {self.logged}, simulated {self.simulated}"


@dataclass(frozen=True)
class TurnCheck:
    """What re-simulating one turn found.

    Attributes:
        turn: the turn number (0 for the protocol's start, -1 for the episode totals).
        kind: ``"start"``, ``"script"``, ``"final"`` or ``"episode"``.
        steps: simulator steps taken for it.
        checks: the comparisons made.
        notes: what could not be compared and why (e.g. a frame the log does not hold).

    """

    turn: int
    kind: str
    steps: int
    checks: tuple[Check, ...]
    notes: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        """Every comparison matched."""
        return all(check.ok for check in self.checks)

    @property
    def mismatches(self) -> tuple[Check, ...]:
        """The comparisons that did not match."""
        return tuple(check for check in self.checks if not check.ok)


@dataclass(frozen=True)
class Resimulation:
    """The outcome of re-simulating an episode.

    Attributes:
        episode_id: the episode re-simulated.
        arena: the verified arena file used.
        seed: the reset seed.
        resolution: the first-person resolution.
        turns: per-turn findings: the start, each logged turn, then the episode totals.
        overviews: top-down views by shown frame ``(turn, index)``, if asked for.
        steps: simulator steps taken in all.
        duration_s: wall time of the re-simulation (env build included).
        probes: what ``probe`` returned at the instant each script turn's observation was
            taken, by turn number (empty unless a probe was given).
        final: what ``final_probe`` returned once the last logged turn was played (None
            unless one was given).

    """

    episode_id: str
    arena: Path
    seed: int
    resolution: int
    turns: tuple[TurnCheck, ...]
    overviews: Mapping[FrameKey, np.ndarray] = field(default_factory=dict)
    steps: int = 0
    duration_s: float = 0.0
    probes: Mapping[int, Any] = field(default_factory=dict)
    final: Any = None

    @property
    def ok(self) -> bool:
        """Everything compared matched the log."""
        return all(turn.ok for turn in self.turns)

    @property
    def first_mismatch(self) -> TurnCheck | None:
        """The earliest turn that did not match, if any."""
        return next((turn for turn in self.turns if not turn.ok), None)

    def render(self) -> str:
        """A per-turn report ending in a one-line verdict."""
        lines = [f"re-simulated {self.episode_id}: arena {self.arena} (sha256 verified), "
                 f"seed {self.seed}, embedded {self.resolution} px"]
        for turn in self.turns:
            label = "total" if turn.kind == "episode" else f"{turn.turn:>5}"
            status = "ok" if turn.ok else "MISMATCH"
            compared = (", ".join(check.name for check in turn.checks) if turn.ok else
                        "; ".join(check.describe() for check in turn.mismatches))
            notes = "".join(f" [{note}]" for note in turn.notes)
            lines.append(f"turn {label} {turn.kind:<7} {turn.steps:>5} steps  {status:<8} "
                         f"{compared or '-'}{notes}")
        lines.append(self.verdict())
        return "\n".join(lines)

    def verdict(self) -> str:
        """One line: MATCH, or where the first mismatch is."""
        scripts = sum(turn.kind == "script" for turn in self.turns)
        timing = f"{self.steps} steps in {self.duration_s:.2f} s"
        first = self.first_mismatch
        if first is None:
            return (f"verdict: MATCH: {scripts} scripts, health, reward, events, state and every "
                    f"logged frame identical to the log ({timing})")
        where = "the episode totals" if first.kind == "episode" else f"turn {first.turn}"
        failed = sum(not turn.ok for turn in self.turns)
        return (f"verdict: MISMATCH from {where} ({first.mismatches[0].describe()}); "
                f"{failed} of {len(self.turns)} rows differ ({timing})")


def verified_arena(episode: LoggedEpisode, arenas_dir: str | Path | None = None) -> Path:
    """Find the episode's arena file and check it is byte for byte the one the run used.

    The file is looked up in ``arenas_dir`` if given, else where the run found it (its own
    ``arenas_dir``, or the folder its manifest records it read: ``$LLM_AAI_ARENAS`` or the
    cache at the time) if the file is still there, else via ``$LLM_AAI_ARENAS`` or the
    testbed cache now. Its sha256 must equal the manifest's.

    Raises:
        ArenaMissingError: the file is in none of those places (named).
        ReplayInputError: no manifest or checksum, or the file differs.

    """
    manifest = _require_manifest(episode)
    task_id = episode.task_id
    if task_id is None:
        raise ReplayInputError(f"{episode.directory}: cannot tell the task of this episode "
                               "(no result.json and the directory name is not <task>_t<trial>)")
    expected = manifest.arena_sha256(task_id)
    if not expected:
        raise ReplayInputError(f"{_manifest_path(episode)}: arenas.{task_id}: no checksum "
                               "recorded for this task")
    variants = _settings(episode).config.variants
    if variants is not None:  # a `run --variants` episode: its file is <variant id>.yaml there
        path = Path(arenas_dir or variants) / f"{task_id}.yaml"
        if not path.is_file():
            raise ArenaMissingError(f"{path}: no such variant file (the run played the variants "
                                   f"in {variants}; give the folder that holds them now as "
                                   "arenas_dir)")
    else:
        path = _testbed_arena(task_id, arenas_dir, manifest)
    actual = file_sha256(path)
    if actual != expected:
        raise ReplayInputError(
            f"{path}: sha256 {actual} differs from {expected}, the checksum of task {task_id} "
            f"in {_manifest_path(episode)}: this is not the arena the episode was played in")
    return path


def _testbed_arena(task_id: str, arenas_dir: str | Path | None,
                   manifest: RunManifest) -> Path:
    """A testbed task's file: in ``arenas_dir``, else where the run found it, else as run finds it.

    Where the run found it: the folder it was given (``arenas_dir`` in its settings), else the
    one its manifest records it read (``arenas_location``: ``$LLM_AAI_ARENAS`` or the cache
    then), whichever holds the file; else the folder ``run`` would use now.

    Raises:
        ArenaMissingError: the file is in none of them (each named).
    """
    looked = []
    if arenas_dir is None:
        found = manifest.arenas_found_in
        recorded = [(manifest.arenas_dir, "the run's --arenas-dir"),
                    *([(found[0], f"where the run found its arenas, {found[1]}")] if found
                      else [])]
        for number, (folder, why) in enumerate(recorded):
            if not folder or folder in (f for f, _ in recorded[:number]):
                continue  # a run given --arenas-dir records that folder twice
            try:
                return resolve_arena_path(task_id, folder)
            except (ArenaError, LookupError, FileNotFoundError):
                looked.append(f"{folder} ({why})")
    try:
        return resolve_arena_path(task_id, arenas_dir)
    except FileNotFoundError as error:
        if not looked:
            raise ArenaMissingError(str(error)) from error
        raise ArenaMissingError(f"arena {task_id} is not in {' nor in '.join(looked)}, and "
                                f"not where a run would look now: {error}") from error
    except (ArenaError, LookupError) as error:
        raise ReplayInputError(str(error)) from error


def resimulate(
    episode: LoggedEpisode,
    *,
    arenas_dir: str | Path | None = None,
    overview_size: int | None = None,
    probe: Callable[[Any], Any] | None = None,
    final_probe: Callable[[Any], Any] | None = None,
) -> Resimulation:
    """Replay the episode's logged actions in the embedded simulator and compare every turn.

    Args:
        episode: the logged episode (inside its run directory, for the manifest).
        arenas_dir: where to look for the arena first (see ``verified_arena``).
        overview_size: if given, also render the top-down view (this many pixels square) at
            every shown frame; they land in ``Resimulation.overviews``.
        probe: if given, called with the env's backend at the instant each script turn's
            observation is taken (the last initial observation for the first script, the end
            of the turn before for the others); its results land in ``Resimulation.probes``.
        final_probe: if given, called with the env's backend once after the last logged
            turn (the state the episode ended in); its result is ``Resimulation.final``.

    Raises:
        ReplayInputError: the run was not embedded, or its manifest lacks what is needed.

    """
    started = time.monotonic()
    setup = _setup(episode)
    arena = verified_arena(episode, arenas_dir)
    env = AnimalAIEnv(resolution=setup["resolution"], backend="embedded",
                      backend_kwargs={"physics_build": setup["physics_build"]})
    try:
        tap = _OverviewTap(env, overview_size)
        capture = (lambda: probe(env.backend)) if probe is not None else None
        start = start_episode(tap, setup["protocol"], seed=setup["seed"], arena=str(arena),
                              also_capture=capture)
        overviews: dict[FrameKey, np.ndarray] = {}
        probes: dict[int, Any] = {}
        if start.views and episode.turns[0].reply is not None:
            probes[episode.turns[0].turn] = start.views[-1]
        rows = [_check_start(episode, start, tap, overviews)]
        walk = _Walk(env, episode, start.outcome.observation, start.outcome.done, overview_size,
                     overviews, setup["modes"])
        for index, record in enumerate(episode.turns):
            row = walk.turn(index, record)
            rows.append(row)
            if walk.stopped:
                break
            following = episode.turns[index + 1] if index + 1 < len(episode.turns) else None
            if capture is not None and following is not None and following.reply is not None:
                probes[following.turn] = capture()
        if episode.result is not None and not walk.stopped:
            rows.append(_check_totals(episode, start.outcome, walk))
        final = final_probe(env.backend) if final_probe is not None else None
    finally:
        env.close()
    steps = start.outcome.steps + walk.steps
    return Resimulation(episode.episode_id, arena, setup["seed"], setup["resolution"],
                        tuple(rows), overviews, steps, time.monotonic() - started, probes, final)


def _settings(episode: LoggedEpisode) -> ResolvedRun:
    """The run's settings, typed (``llm_aai.settings``), from a manifest of any version."""
    try:
        return settings_of(_require_manifest(episode))
    except SchemaError as error:
        raise ReplayInputError(f"{_manifest_path(episode)}: {error}") from error


def _setup(episode: LoggedEpisode) -> dict[str, Any]:
    """Resolution, seed and protocol from the manifest, refusing what cannot be re-simulated."""
    where = _manifest_path(episode)
    config = _settings(episode).config
    if config.backend != "embedded":
        raise ReplayInputError(f"{where}: config.backend is {config.backend!r}; only runs on "
                               "the embedded simulator can be re-simulated (Unity is not "
                               "bit-exact)")
    if episode.seed is None:
        raise ReplayInputError(f"{where}: seeds.episodes.{episode.base_id}: no seed recorded")
    return {"resolution": config.resolution, "protocol": config.protocol, "seed": episode.seed,
            "modes": config.modes, "physics_build": config.physics_build}


class _OverviewTap:
    """Passes steps through to the env, rendering the overview after each call if asked.

    Wrapping the env (rather than re-implementing the protocol's start) keeps the start
    exactly ``start_episode``: the overviews after its first calls are the views at the
    moments the initial observations were taken.
    """

    def __init__(self, env, size: int | None):
        self.env = env
        self.size = size
        self.views: list[np.ndarray] = []

    def reset(self, *, seed, options):
        return self.env.reset(seed=seed, options=options)

    def play(self, actions, *, observe: bool = True):
        result = self.env.play(actions, observe=observe)
        self._capture()
        return result

    def step(self, action):
        result = self.env.step(action)
        self._capture()
        return result

    def _capture(self) -> None:
        if self.size:
            self.views.append(self.env.backend.render_overview(self.size))


def _check_start(episode: LoggedEpisode, start, tap: _OverviewTap,
                 overviews: dict[FrameKey, np.ndarray]) -> TurnCheck:
    """The start against the turn-0 record (if logged) and the first record's images."""
    first = episode.turns[0]
    shown = [observation["image"] for observation in start.observations]
    logged = _start_checks(episode.start, start)
    if first.reply is None:  # it ended before the first script: what was drawn was never sent
        ended = bool(start.outcome.done)
        return TurnCheck(0, "start", start.outcome.steps,
                         (*logged, Check("ended before the first script", ended, "True",
                                         str(ended))))
    checks = [*logged, Check("observations", len(shown) == len(first.sent_images),
                             str(len(first.sent_images)), str(len(shown)))]
    for index, (image, relative) in enumerate(zip(shown, first.sent_images, strict=False)):
        checks.append(_frame_check(f"frame {index}", episode,
                                   episode.frame_path(first.turn, relative), image))
        if tap.size:
            overviews[(first.turn, index)] = tap.views[index]
    return TurnCheck(0, "start", start.outcome.steps, tuple(checks))


def _start_checks(record: TurnRecord | None, start) -> list[Check]:
    """Steps, health, reward and events before the first script, as turn 0 logged them.

    Logs that record the health told to the model at the start (``health_told``) have it
    checked too; older ones do not.
    """
    if record is None:  # logs from before turn 0 was written
        return []
    outcome = start.outcome
    checks = [
        Check("steps", outcome.steps == record.steps, str(record.steps), str(outcome.steps)),
        _close("health", record.health, round(outcome.health, HEALTH_DECIMALS), TOLERANCE),
        _close("reward", record.reward, outcome.reward, TOLERANCE),
        _events_check(record, outcome),
    ]
    if record.health_told is not None:
        checks.append(_close("health told", record.health_told,
                             round(start.first_observation_health, HEALTH_DECIMALS), TOLERANCE))
    return checks


class _Walk:
    """Steps through the logged turns, keeping the simulated observation and totals."""

    def __init__(self, env, episode: LoggedEpisode, observation, done: bool,
                 overview_size: int | None, overviews: dict[FrameKey, np.ndarray],
                 modes: ModeSettings | None = None):
        self.env = env
        self.modes = modes or ModeSettings()
        self.policy = self.modes.make_observations()
        self.episode = episode
        self.observation = observation
        self.done = done
        self.overview_size = overview_size
        self.overviews = overviews
        self.steps = 0
        self.reward = 0.0
        self.stopped = False

    def turn(self, index: int, record: TurnRecord) -> TurnCheck:
        kind = "final" if record.reply is None else "script"
        if self.done and record.actions:
            self.stopped = True
            return TurnCheck(record.turn, kind, 0, (Check(
                "actions", False, f"{len(record.actions)} more actions",
                "the episode had already ended"),))
        runs = self.policy.runs(record.actions) if record.reply is not None else [record.actions]
        parts = []
        for run in runs:  # cut where the run cut it, so the frames in between are drawn too
            parts.append(execute_actions(self.env, run, observation=self.observation))
            self.observation = parts[-1].observation
            if parts[-1].done:
                break
        outcome = parts[0] if len(parts) == 1 else combine(parts)
        self.done = self.done or outcome.done
        self.steps += outcome.steps
        self.reward += outcome.reward
        checks = [
            Check("steps", outcome.steps == record.steps, str(record.steps), str(outcome.steps)),
            _close("health", record.health, round(outcome.health, HEALTH_DECIMALS), TOLERANCE),
            _close("reward", record.reward, outcome.reward, TOLERANCE),
            _events_check(record, outcome),
            Check("ended", bool(record.terminated) == self.done,
                  str(bool(record.terminated)), str(self.done)),
        ]
        notes = []
        if record.state is not None:
            checks.extend(_state_checks(record.state, outcome))
        elif outcome.steps:
            notes.append("state not logged")
        checks.extend(self._frames_during(index, runs, parts))
        frame_key, frame_path, why = self._logged_frame_after(index, record)
        if frame_path is not None:
            checks.append(_frame_check("frame", self.episode, frame_path,
                                       outcome.observation["image"]))
        else:
            notes.append(why)
        if frame_key is not None and self.overview_size:
            self.overviews[frame_key] = self.env.backend.render_overview(self.overview_size)
        if outcome.steps < len(record.actions):
            # the episode ended with logged actions left: the log and the replay disagree
            # (the runner logs only the actions played), and what follows cannot be checked
            self.stopped = True
            checks.append(Check("actions", False, f"{len(record.actions)} played",
                                f"the episode ended after {outcome.steps}"))
            left = len(self.episode.turns) - index - 1
            if left:
                notes.append(f"{left} later turn(s) and the totals not checked")
        return TurnCheck(record.turn, kind, outcome.steps, tuple(checks), tuple(notes))

    def _logged_frame_after(self, index: int, record: TurnRecord):
        """Which logged image shows the state after this turn: ``(key, path, why-not)``."""
        turns = self.episode.turns
        if record.reply is None:
            shown = record
        elif index + 1 < len(turns):
            shown = turns[index + 1]
            if shown.reply is None and shown.actions:
                return None, None, "frame after it not logged (the run-out follows)"
        else:
            return None, None, "no later frame logged (episode unfinished)"
        if not shown.sent_images:
            return None, None, f"turn {shown.turn} logged no image"
        last = len(shown.sent_images) - 1  # the view now; frames taken during a reply precede it
        path = self.episode.frame_path(shown.turn, shown.sent_images[last])
        return (shown.turn, last), path, ""


    def _frames_during(self, index: int, runs, parts) -> list[Check]:
        """The frames taken during the turn (``--observe-every``) against the next message's."""
        turns = self.episode.turns
        if len(parts) < 2 or index + 1 >= len(turns) or turns[index + 1].reply is None:
            return []  # the episode's end message carries only the final view
        sent = turns[index + 1].sent_images[:-1]
        during = [part.observation["image"] for part in parts[:-1]]
        shown_in = turns[index + 1].turn
        if self.modes.filmstrip:
            steps = frame_steps([len(run) for run in runs][: len(during)])
            if len(sent) != 1:
                return [Check("filmstrip", False, f"{len(sent)} images", "1 strip")]
            return [_frame_check("filmstrip", self.episode,
                                 self.episode.frame_path(shown_in, sent[0]),
                                 filmstrip(during, steps))]
        checks = [Check("frames during", len(sent) == len(during), str(len(sent)),
                        str(len(during)))]
        checks += [_frame_check(f"frame during {i}", self.episode,
                                self.episode.frame_path(shown_in, path), image)
                   for i, (path, image) in enumerate(zip(sent, during, strict=False))]
        return checks


def _check_totals(episode: LoggedEpisode, start, walk: _Walk) -> TurnCheck:
    """The sealed result's totals against the simulated episode."""
    result = episode.result
    steps = start.steps + walk.steps
    reward = start.reward + walk.reward
    health = round(float(np.asarray(walk.observation["health"]).reshape(-1)[0]), HEALTH_DECIMALS)
    return TurnCheck(-1, "episode", steps, (
        Check("steps", steps == result.steps, str(result.steps), str(steps)),
        _close("reward", result.reward, round(reward, 6), TOLERANCE),
        _close("final health", result.final_health, health, TOLERANCE),
    ))


def _close(name: str, logged: float, simulated: float, tolerance: float) -> Check:
    ok = math.isclose(float(logged), float(simulated), rel_tol=0.0, abs_tol=tolerance)
    return Check(name, ok, repr(float(logged)), repr(float(simulated)))


def _events_check(record: TurnRecord, outcome) -> Check:
    """Goal and zone events (kind, step, reward), leaving out the per-step decay as the log does."""
    simulated = logged_events(outcome.infos)
    logged = list(record.events)
    ok = len(logged) == len(simulated) and all(
        a.get("kind") == b["kind"] and a.get("step") == b["step"]
        and math.isclose(float(a.get("reward", math.nan)), float(b["reward"]),
                         rel_tol=0.0, abs_tol=TOLERANCE)
        for a, b in zip(logged, simulated, strict=False))
    return Check("events", ok, _event_text(logged), _event_text(simulated))


def _event_text(events: Sequence[Mapping[str, Any]]) -> str:
    return "[" + ", ".join(f"{e.get('kind')}@{e.get('step')}" for e in events) + "]"


def _state_checks(state: Mapping[str, Any], outcome) -> list[Check]:
    """Position and yaw after the turn, within ``STATE_TOLERANCE``."""
    info = outcome.infos[-1] if outcome.infos else {}
    checks = []
    if "position" in state:
        logged = [float(v) for v in state["position"]]
        simulated = [float(v) for v in info.get("position", ())]
        ok = len(logged) == len(simulated) and all(
            math.isclose(a, b, rel_tol=0.0, abs_tol=STATE_TOLERANCE)
            for a, b in zip(logged, simulated, strict=False))
        checks.append(Check("position", ok, repr(logged), repr(simulated) if simulated else
                            "none (no step taken)"))
    if "yaw" in state:
        yaw = info.get("yaw")
        ok = yaw is not None and math.isclose(float(state["yaw"]), float(yaw), rel_tol=0.0,
                                              abs_tol=STATE_TOLERANCE)
        checks.append(Check("yaw", ok, repr(float(state["yaw"])),
                            "none (no step taken)" if yaw is None else repr(float(yaw))))
    return checks


def _frame_check(name: str, episode: LoggedEpisode, path: Path, image: np.ndarray) -> Check:
    """Pixel-for-pixel equality with a logged frame, describing the difference if any.

    A JPEG frame is compared with the re-rendered frame encoded the same way (the run's
    quality, from the manifest): the encoder is deterministic, so an exact replay still
    matches every pixel.
    """
    try:
        logged = read_frame(path)
    except (OSError, ValueError) as error:
        raise ReplayInputError(f"{path}: cannot read the logged frame: {error}") from error
    if path.suffix.lower() in (".jpg", ".jpeg"):
        quality = _settings(episode).config.frames.quality
        image = FrameFormat("jpeg", quality).as_stored(image)
    image = np.asarray(image)
    if logged.shape != image.shape:
        return Check(name, False, f"{path.name} {logged.shape}", f"{image.shape}")
    differ = np.any(logged != image, axis=-1)
    if not differ.any():
        return Check(name, True, path.name, "identical")
    delta = int(np.abs(logged.astype(np.int16) - image.astype(np.int16)).max())
    return Check(name, False, path.name,
                 f"{int(differ.sum())} of {differ.size} pixels differ (max |d| {delta})")


def _require_manifest(episode: LoggedEpisode) -> RunManifest:
    if episode.manifest is None:
        raise ReplayInputError(f"{_manifest_path(episode)} not found: re-simulation needs the "
                               "run's manifest (pass the episode inside its run directory)")
    return episode.manifest


def _manifest_path(episode: LoggedEpisode) -> Path:
    return episode.directory.parent.parent / "manifest.json"
