"""The player process: connect to ``animalai``'s gRPC server and serve episodes over it.

The roles are inverted as in ML-Agents: ``animalai`` (Python) is the gRPC server, the player
the client. Each ``Exchange`` call carries the player's output and its reply carries
Python's next input, so exactly one call is in flight and it waits as long as the user does
between two steps. The handshake is two calls: the player's versions (the reply holds the
seed and the client's own versions, which choose its dialect, ``llm_aai.bridge.dialects``),
then an empty message (the reply is the first RESET).

Every wait is bounded, so no player outlives its client: a client that dies closes the
connection and the pending call fails at once; one that stays alive but stops talking (a
script whose ``AnimalAIEnvironment`` failed or was never closed hangs at exit in
``mlagents_envs``' gRPC thread) gets no reply, and the player stops after
``LLM_AAI_BRIDGE_IDLE_TIMEOUT`` seconds (status 4). Reaching the server at start is bounded
by ``CONNECT_TIMEOUT``.

Errors the user must see (an arena that does not load, an unplayable option) are written to
the player's stderr, which ``mlagents_envs`` leaves on the user's console, and to
``-logFile``; the player then exits with status 3 without calling again, so ``animalai``
raises "Environment shut down with return code 3" at its next poll rather than hanging.
A reply that is not an ML-Agents message (``read_reply``) is such an error too: only a
close (status 400) or a connection gRPC reports lost means that animalai went away (status 0).
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from importlib import metadata
from pathlib import Path
from typing import TextIO

from google.protobuf.message import DecodeError

from llm_aai.arena.errors import ArenaError, PlacementError
from llm_aai.bridge import BEHAVIOR_NAME, observations
from llm_aai.bridge.dialects import ClientDialect, dialect_for
from llm_aai.bridge.episodes import AgentRow, Episodes
from llm_aai.bridge.options import (
    CONNECT_TIMEOUT,
    IDLE_TIMEOUT_ENV,
    PlayerOptions,
    clamp_resolution,
)
from llm_aai.bridge.side_channels import (
    ARENA_CHANNEL,
    ENGINE_CHANNEL,
    describe_engine_settings,
    parse_records,
    read_arena_payload,
)
from llm_aai.bridge.wire import unity_wire_pb2 as wire
from llm_aai.sim.render import shared_gl
from llm_aai.sim.stability import SimulationUnstable

EXCHANGE = "/communicator_objects.UnityToExternalProto/Exchange"
COMMUNICATION_VERSION = "1.5.0"
EXIT_BAD_INPUT = 3
EXIT_IDLE = 4
STEP, RESET, QUIT = 0, 1, 2
OK_STATUS, CLOSE_STATUS = 200, 400


def package_version() -> str:
    """What the player reports as its package version: never mistaken for a Unity build's."""
    try:
        version = metadata.version("llm-aai")
    except metadata.PackageNotFoundError:
        version = "unknown"
    return f"llm-aai-bridge-{version}"


PLAYER_NAME = "llm-aai bridge (embedded MuJoCo simulator, not the Unity player)"


class PlayerLog:
    """The player's log: stderr (the user's console) and, with ``-logFile``, a file."""

    def __init__(self, log_file: Path | None, stream: TextIO | None = None) -> None:
        self._stream = stream if stream is not None else sys.stderr  # the one of now
        self._file = None
        if log_file is not None:
            log_file.parent.mkdir(parents=True, exist_ok=True)
            self._file = log_file.open("a", encoding="utf-8")

    def __call__(self, message: str) -> None:
        """Write one line."""
        line = f"[llm-aai bridge] {message}\n"
        self._stream.write(line)
        self._stream.flush()
        if self._file is not None:
            self._file.write(line)
            self._file.flush()


class BadInput(Exception):
    """Input the player cannot serve; the message is for the user's log."""


def serve(options: PlayerOptions, log: Callable[[str], None], *,
          episodes_type: type[Episodes] = Episodes) -> int:
    """Run the player until ``animalai`` closes it; return the exit status.

    ``episodes_type`` plays the world; the default is the one there is. The bridge's
    benchmark passes one that skips the world after its first step, to measure what serving
    a step costs without physics or a frame (``benchmarks/bridge_ceiling.py``).
    """
    os.environ.setdefault("GRPC_VERBOSITY", "ERROR")  # no C-core chatter on the user's console
    import grpc

    problems = options.problems()
    if problems:
        for problem in problems:
            log(f"error: {problem}")
        return EXIT_BAD_INPUT
    if clamp_resolution(options.resolution) != options.resolution:
        log(f"warning: --resolution {options.resolution} is outside 4-512; the camera uses "
            f"{clamp_resolution(options.resolution)} px, as the Unity player clamps it")
    if options.player_mode != 0:
        log("note: --playerMode 1 (human play) has no window here; serving Python instead")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    channel = grpc.insecure_channel(f"localhost:{options.port}")
    # Replies come as bytes and are parsed here, so that one that does not parse is bad
    # input with a reason, not a failed call gRPC reports as INTERNAL.
    exchange = _Exchange(channel.unary_unary(
        EXCHANGE, request_serializer=wire.UnityMessageProto.SerializeToString),
        idle_timeout=options.idle_timeout)

    episodes = None
    connected = False
    try:
        # the server may still be starting
        reply = exchange(_hello(wire), wait_for_ready=True, timeout=CONNECT_TIMEOUT)
        connected = True
        if reply is None:
            return 0
        handshake = reply.unity_input.rl_initialization_input
        seed = handshake.seed
        dialect, warning = dialect_for(handshake.package_version)
        log(f"client: mlagents_envs {handshake.package_version or '(no version)'}, "
            f"communication {handshake.communication_version}; serving {dialect.name}")
        if warning:
            log(warning)
        reply = exchange(wire.UnityMessageProto(header=wire.HeaderProto(status=200)))
        episodes = episodes_type(options, seed, log)
        first = True
        with _drawing_context(options):
            while reply is not None:
                rl_input = reply.unity_input.rl_input
                rows = _apply(episodes, rl_input, log)
                if rows is None:  # QUIT
                    return 0
                reply = exchange(_output(wire, episodes, dialect, rows, with_spec=first))
                first = False
        return 0
    except BadInput as error:
        log(f"error: {error}")
        return EXIT_BAD_INPUT
    except grpc.RpcError as error:
        if error.code() == grpc.StatusCode.DEADLINE_EXCEEDED:
            waited = options.idle_timeout if connected else CONNECT_TIMEOUT
            log(f"no word from animalai for {waited:g} s; stopping (a client that stopped "
                f"without closing its environment; {IDLE_TIMEOUT_ENV} sets the wait)")
            return EXIT_IDLE
        log(f"animalai went away ({error.code().name}); stopping")
        return 0
    finally:
        if episodes is not None:
            episodes.close()
        channel.close()


class _Exchange:
    """The player's one ``Exchange`` call: send a message, read animalai's reply.

    Why its own reader: a reply that is not an ML-Agents message (bytes that do not parse,
    another message type, an unknown status, more than gRPC's 4 MiB) is bad input, to be
    reported as such (status 3), where gRPC's own failures mean animalai went away.
    """

    def __init__(self, call, *, idle_timeout: float) -> None:
        import grpc

        self._call = call
        self._idle_timeout = idle_timeout
        self._rpc_error = grpc.RpcError
        self._too_big = grpc.StatusCode.RESOURCE_EXHAUSTED
        self.sent = 0

    def __call__(self, message, **kwargs):
        """Send ``message``; return animalai's reply, or None for a close (status 400)."""
        self.sent += 1
        kwargs.setdefault("timeout", self._idle_timeout)
        try:
            data = self._call(message, **kwargs)
        except self._rpc_error as error:
            if error.code() == self._too_big:
                raise BadInput(f"{self._what()}: a message over gRPC's 4 MiB limit "
                               f"({error.details()})") from None
            raise
        return read_reply(data, self._what())

    def _what(self) -> str:
        if self.sent == 1:
            return "animalai's reply to the handshake"
        return f"animalai's reply to the player's message {self.sent}"


def read_reply(data: bytes, what: str):
    """The ``UnityMessageProto`` in ``data``; None for a close; ``BadInput`` for anything else.

    ``what`` names the reply in the error. A message of another type often parses (its
    fields land among the unknown ones) but has no header; animalai sends status 200 with an
    input and 400 to close, so any other status is not animalai either.
    """
    try:
        reply = wire.UnityMessageProto.FromString(data)
    except DecodeError:
        raise BadInput(f"{what} does not parse as an ML-Agents UnityMessageProto "
                       f"({len(data)} bytes; truncated or not that protocol)") from None
    if not reply.HasField("header"):
        raise BadInput(f"{what} has no header: not an ML-Agents UnityMessageProto "
                       f"({len(data)} bytes)")
    if reply.header.status == CLOSE_STATUS:
        return None
    if reply.header.status != OK_STATUS:
        raise BadInput(f"{what} has status {reply.header.status}; animalai sends "
                       f"{OK_STATUS} (an input) or {CLOSE_STATUS} (a close)")
    return reply


def _drawing_context(options: PlayerOptions) -> AbstractContextManager:
    """The OpenGL context, kept current in the player's one thread while it serves.

    Why: each frame otherwise makes the context current and releases it again
    (``llm_aai.sim.render.shared_gl``, for processes whose threads take turns), two
    ``eglMakeCurrent`` calls that cost 30-60 us a step; frames are the same either way.
    """
    return (shared_gl(clamp_resolution(options.resolution)) if options.use_camera
            else nullcontext())


def _apply(episodes: Episodes, rl_input, log) -> list[AgentRow] | None:
    """Side channels first, then the command (the player's order); None means quit."""
    try:
        engine = []
        for record in parse_records(rl_input.side_channel):
            if record.channel == ARENA_CHANNEL:
                episodes.configure(read_arena_payload(record.payload))
            elif record.channel == ENGINE_CHANNEL:
                engine.append(describe_engine_settings(record.payload))
        if engine:
            log(f"engine settings ignored (headless, fixed 0.02 s steps): {'; '.join(engine)}")
        if rl_input.command == QUIT:
            return None
        if rl_input.command == RESET:
            return episodes.reset()
        move, turn = _action(rl_input, log)
        return episodes.step(move, turn)
    except (ArenaError, PlacementError, SimulationUnstable, ValueError) as error:
        raise BadInput(str(error)) from error


def _action(rl_input, log) -> tuple[int, int]:
    """This agent's ``[move, turn]``; none (after a terminal-only message) means stand still."""
    actions = rl_input.agent_actions.get(BEHAVIOR_NAME)
    if actions is None or not actions.value:
        return 0, 0
    values = list(actions.value[0].discrete_actions)
    if len(values) != 2 or any(v not in (0, 1, 2) for v in values):
        # The Unity agent's switch ignores values it does not know; so does the bridge.
        log(f"warning: action {values} is not two branches of 0-2; unknown values do nothing")
        values = [v if v in (0, 1, 2) else 0 for v in (values + [0, 0])[:2]]
    return values[0], values[1]


def _hello(wire):
    capabilities = wire.UnityRLCapabilitiesProto(
        baseRLCapabilities=True, concatenatedPngObservations=True, compressedChannelMapping=True,
        hybridActions=True, trainingAnalytics=True, variableLengthObservation=True,
        multiAgentGroups=True)
    init = wire.UnityRLInitializationOutputProto(
        name=PLAYER_NAME, communication_version=COMMUNICATION_VERSION,
        package_version=package_version(), capabilities=capabilities)
    return wire.UnityMessageProto(header=wire.HeaderProto(status=200),
                                  unity_output=wire.UnityOutputProto(rl_initialization_output=init))


def _output(wire, episodes: Episodes, dialect: ClientDialect, rows: list[AgentRow], *,
            with_spec: bool):
    # Filled in place: building parts and nesting them copies each part once more (the
    # camera's 85 KB at 84 px), for the same bytes on the wire.
    message = wire.UnityMessageProto()
    message.header.status = 200
    output = message.unity_output
    infos = output.rl_output.agentInfos[BEHAVIOR_NAME].value
    for row in rows:
        _fill_agent_info(infos.add(), wire, episodes, dialect, row)
    output.rl_output.side_channel = b""
    if with_spec:  # the behaviour spec, with the first message that has an agent in it
        brain = output.rl_initialization_output.brain_parameters.add()
        brain.brain_name = BEHAVIOR_NAME
        brain.is_training = True
        brain.action_spec.num_discrete_actions = 2
        brain.action_spec.discrete_branch_sizes.extend([3, 3])
        brain.vector_action_size_deprecated.extend([3, 3])
    return message


def _fill_agent_info(info, wire, episodes: Episodes, dialect: ClientDialect, row: AgentRow):
    info.reward = row.reward
    info.done = row.done
    info.max_step_reached = False
    info.id = 0
    if row.camera is not None:
        channels = 1 if episodes.options.grayscale else 3
        camera = info.observations.add(
            shape=dialect.camera_shape(channels, episodes.resolution),
            dimension_properties=dialect.camera_dimension_properties(), name="CameraSensor")
        if dialect.floats_cheap and observations.small_rgb(row.camera, channels):
            camera.compression_type = wire.NONE
            camera.MergeFromString(observations.float_data_field(
                row.camera, channels_last=dialect.channels_last))
        else:
            camera.compression_type = wire.PNG
            camera.compressed_data = observations.camera_png(row.camera)
    if row.rays is not None:
        rays = info.observations.add(shape=[len(row.rays)], dimension_properties=[1],
                                     name="RayPerceptionSensor")
        rays.float_data.data.extend(row.rays)
    vector = info.observations.add(shape=[7], dimension_properties=[1], name="VectorSensor_size7")
    vector.float_data.data.extend(row.vector)
