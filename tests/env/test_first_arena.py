"""A file listing its arenas out of id order plays arena 0 first, as Unity's player does."""

from __future__ import annotations

import textwrap

from llm_aai.arena import loads_config
from llm_aai.bridge.episodes import ArenaOrder
from llm_aai.env.backends.embedded import EmbeddedBackend

OUT_OF_ORDER = textwrap.dedent("""\
    !ArenaConfig
    arenas:
      1: !Arena
        t: 100
        items:
        - !Item
          name: BadGoal
          positions: [!Vector3 {x: 20, y: 0, z: 30}]
      0: !Arena
        t: 200
        items:
        - !Item
          name: GoodGoal
          positions: [!Vector3 {x: 20, y: 0, z: 30}]
    """)


def test_the_first_arena_is_id_0_whatever_the_order_listed():
    config = loads_config(OUT_OF_ORDER)
    assert [key for key, _ in config.arenas] == [1, 0]
    assert config.first_id == 0
    assert config.arena().time_limit == 200


def test_without_an_id_0_the_first_listed_is_first():
    config = loads_config(OUT_OF_ORDER.replace("  0: !Arena", "  2: !Arena"))
    assert config.first_id == 1
    assert config.arena().time_limit == 100


def test_the_embedded_backend_and_the_bridge_start_with_arena_0(tmp_path):
    path = tmp_path / "out-of-order.yaml"
    path.write_text(OUT_OF_ORDER, encoding="utf-8")
    backend = EmbeddedBackend(64)
    try:
        backend.reset(path, seed=0)
        assert [obj.spec.name for obj in backend.simulator.objects] == ["GoodGoal"]
    finally:
        backend.close()
    assert ArenaOrder().advance(loads_config(OUT_OF_ORDER), rng=None) == 0
