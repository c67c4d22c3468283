"""The arena channel's two payload forms and side-channel framing, without a client."""

from __future__ import annotations

import uuid

import pytest

from llm_aai.arena.errors import ArenaError
from llm_aai.bridge.side_channels import (
    ARENA_CHANNEL,
    SideChannelError,
    encode_record,
    parse_records,
    read_arena_payload,
)
from tests.helpers.arenas import GOAL_AHEAD, write_arena


def test_records_round_trip_in_mlagents_guid_layout():
    data = encode_record(ARENA_CHANNEL, b"abc") + encode_record(uuid.uuid4(), b"")
    records = parse_records(data)
    assert [r.payload for r in records] == [b"abc", b""]
    assert records[0].channel == ARENA_CHANNEL
    # .NET byte order: the first three groups little-endian
    assert data[:4] == bytes.fromhex("37c8369c")
    with pytest.raises(SideChannelError, match="claims 3 bytes"):
        parse_records(data[:22])


def test_arena_payload_is_a_path_or_the_yaml_itself(tmp_path):
    path = write_arena(tmp_path, GOAL_AHEAD)
    from_path = read_arena_payload(str(path).encode())
    from_text = read_arena_payload(path.read_bytes())
    assert from_path.arenas[0][1].time_limit == from_text.arenas[0][1].time_limit == 250
    with pytest.raises(ArenaError, match="no such arena file"):
        read_arena_payload(str(tmp_path / "missing.yml").encode())
    with pytest.raises(ArenaError, match=r"side channel>:\d+"):
        read_arena_payload(b"!ArenaConfig\narenas:\n  0: !Arena\n    timeLimit: -5\n")
