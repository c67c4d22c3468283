"""ML-Agents side channels as the player receives them, and the arena configuration channel.

``rl_input.side_channel`` is a run of records ``[16-byte channel GUID (.NET layout)]
[int32 LE length][payload]``. ``animalai`` 6.2.0 sends three channels: engine configuration
(window size, quality, time scale, frame rates: meaningless for a headless simulator, so they
are only logged), the arena configuration, and a one-off training-analytics message.

The arena channel's payload is raw UTF-8: an absolute file path (what ``animalai`` 6.2.0
sends) or the YAML text itself (older clients). As the 4.3+ player does, an existing path is
read and anything else is taken as YAML.
"""

from __future__ import annotations

import os
import struct
import uuid
from dataclasses import dataclass

from llm_aai.arena.agents import refuse_several_agents
from llm_aai.arena.errors import ArenaError
from llm_aai.arena.model import ArenaConfig
from llm_aai.arena.validate import require_valid
from llm_aai.arena.yaml_io import load_config, loads_config

ARENA_CHANNEL = uuid.UUID("9c36c837-cad5-498a-b675-bc19c9370072")
ENGINE_CHANNEL = uuid.UUID("e951342c-4f7e-11ea-b238-784f4387d1f7")
ANALYTICS_CHANNEL = uuid.UUID("b664a4a9-d86f-5a5f-95cb-e8353a7e8356")


class SideChannelError(ValueError):
    """Bytes that are not a well-formed run of side-channel records."""


@dataclass(frozen=True)
class Record:
    """One side-channel message."""

    channel: uuid.UUID
    payload: bytes


def parse_records(data: bytes) -> list[Record]:
    """Split ``rl_input.side_channel`` into its records.

    Raises:
        SideChannelError: a truncated record.

    """
    records, offset = [], 0
    while offset < len(data):
        if offset + 20 > len(data):
            raise SideChannelError(f"side channel truncated at byte {offset} of {len(data)}")
        channel = uuid.UUID(bytes_le=bytes(data[offset:offset + 16]))
        (length,) = struct.unpack_from("<i", data, offset + 16)
        start = offset + 20
        if length < 0 or start + length > len(data):
            raise SideChannelError(f"side-channel record at byte {offset} claims {length} bytes "
                                   f"but {len(data) - start} remain")
        records.append(Record(channel, bytes(data[start:start + length])))
        offset = start + length
    return records


def encode_record(channel: uuid.UUID, payload: bytes) -> bytes:
    """One record as ``mlagents_envs`` writes it (for tests and tools)."""
    return channel.bytes_le + struct.pack("<i", len(payload)) + payload


def describe_engine_settings(payload: bytes) -> str:
    """An engine-configuration record in words (the bridge has no window to apply it to)."""
    if len(payload) < 4:
        return f"an engine setting of {len(payload)} bytes"
    (kind,) = struct.unpack_from("<i", payload, 0)
    names = {0: "screen resolution", 1: "quality level", 2: "time scale",
             3: "target frame rate", 4: "capture frame rate"}
    if kind == 2 and len(payload) >= 8:
        value: object = struct.unpack_from("<f", payload, 4)[0]
    else:
        value = struct.unpack_from(f"<{(len(payload) - 4) // 4}i", payload, 4)
    return f"{names.get(kind, f'setting {kind}')} {value}"


def read_arena_payload(payload: bytes) -> ArenaConfig:
    """The arena configuration an arena-channel payload names or contains.

    Raises:
        ArenaError: not a readable, valid arena configuration (the message names the file,
            line and field), or a configuration with several agents, which the embedded
            simulator does not support.

    """
    try:
        text = payload.decode("utf-8")
    except UnicodeDecodeError:
        raise ArenaError("the arena configuration is neither a file path nor UTF-8 YAML text",
                         file="<arena side channel>") from None
    candidate = text.strip()
    if candidate and "\n" not in candidate and os.path.isfile(candidate):
        config = load_config(candidate)
    else:
        if not candidate.startswith("!ArenaConfig") and "\n" not in candidate:
            raise ArenaError(f"no such arena file: {candidate!r} (the bridge reads the path "
                             "on this machine, so client and player must share a filesystem)",
                             file=candidate or "<arena side channel>")
        config = require_valid(loads_config(text, "<arena YAML from the side channel>"))
    refuse_several_agents(config, who="the llm-aai bridge")
    return config
