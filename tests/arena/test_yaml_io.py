import pickle
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from llm_aai.arena import (
    RGB,
    Arena,
    ArenaConfig,
    ArenaError,
    Item,
    Vector3,
    dump_config,
    load_config,
    loads_config,
    validate_config,
)

OLD = """!ArenaConfig
arenas:
  0: !Arena
    t: 250
    pass_mark: 2.5
    blackouts: [-20]
    random_seed: 7
    items:
    - !Item
      name: Wall
      positions:
      - !Vector3 {x: 1, y: 0, z: 1e1}
      rotations: [90]
      sizes:
      - !Vector3 {x: .5, y: 2}
      colors:
      - !RGB {r: 255, g: -1}
  3: !Arena
    t: 100
    items: []
"""


def test_both_spellings_parse_to_the_same_config():
    new = (OLD.replace("t: 250", "timeLimit: 250").replace("pass_mark", "passMark")
           .replace("random_seed", "randomSeed").replace("t: 100", "timeLimit: 100"))
    assert loads_config(OLD) == loads_config(new)


def test_values_missing_fields_and_multiple_arenas():
    config = loads_config(OLD, source="old.yaml")
    assert [i for i, _ in config.arenas] == [0, 3]
    arena = config.arena(0)
    assert (arena.time_limit, arena.pass_mark, arena.blackouts, arena.random_seed) == (
        250, 2.5, (-20,), 7)
    wall = arena.items[0]
    assert wall.positions == (Vector3(1, 0, 10),)  # 1e1: YAML 1.2 number, as YamlDotNet reads
    assert wall.sizes == (Vector3(0.5, 2, 0),)  # a missing field is 0
    assert wall.colors == (RGB(255, -1, 0),)
    assert wall.location.line == 9 and wall.positions[0].location.line == 12
    assert config.arena(3).items == ()
    with pytest.raises(KeyError, match="old.yaml has no arena 5"):
        config.arena(5)


def test_dump_round_trips_and_writes_the_chosen_spelling():
    config = loads_config(OLD)
    old, new = dump_config(config), dump_config(config, spelling="new")
    assert "    t: 250" in old and "pass_mark" in old
    assert "timeLimit: 250" in new and "passMark" in new and "randomSeed: 7" in new
    assert loads_config(old) == config == loads_config(new)
    with pytest.raises(ValueError):
        dump_config(config, spelling="newest")


def test_aai_known_optional_item_keys_are_kept_in_extra():
    text = OLD.replace("      rotations: [90]\n", "      rotations: [90]\n      delays: [1, 2]\n"
                       "      symbolNames: [circle]\n      spawnColors:\n"
                       "      - !RGB {r: 1, g: 2, b: 3}\n      skins: [hamster]\n"
                       "      frozenAgentDelays: [4]\n")
    item = loads_config(text).arena().items[0]
    assert dict(item.extra) == {"delays": (1, 2), "symbolNames": ("circle",),
                                "spawnColors": (RGB(1, 2, 3),)}
    assert item.skins == ("hamster",) and item.frozen_agent_delays == (4.0,)
    assert loads_config(dump_config(loads_config(text))) == loads_config(text)


def test_untagged_nested_mappings_are_accepted_like_yamldotnet():
    text = "arenas:\n  0:\n    t: 5\n    items:\n    - name: Agent\n      positions:\n" \
           "      - {x: 1, y: 0, z: 2}\n"
    assert loads_config(text).arena().agent.positions == (Vector3(1, 0, 2),)


def test_loading_never_builds_python_objects():
    text = "!ArenaConfig\narenas:\n  0: !!python/object/apply:os.system ['touch /tmp/pwned']\n"
    with pytest.raises(ArenaError, match="unknown tag"):
        loads_config(text)


def test_error_is_a_value_error_that_pickles():
    with pytest.raises(ValueError) as info:
        loads_config("!ArenaConfig\narenas:\n  0: !Arena\n    t: x\n", source="a.yaml")
    err = info.value
    assert (err.file, err.line, err.field) == ("a.yaml", 4, "t")
    assert str(err) == "a.yaml:4: t: expected a number, got str 'x'"
    assert str(pickle.loads(pickle.dumps(err))) == str(err)


def test_unreadable_path_is_an_arena_error(tmp_path):
    with pytest.raises(ArenaError, match="cannot read file"):
        load_config(tmp_path / "missing.yaml")


def test_whole_testbed_parses_validates_and_round_trips_fast(testbed_dir):
    files = sorted(testbed_dir.glob("*.yaml"))
    assert len(files) == 900
    start = time.perf_counter()
    configs = [load_config(f) for f in files]
    problems = [p for c in configs for p in validate_config(c)]
    elapsed = time.perf_counter() - start
    errors = [str(p) for p in problems if p.severity == "error"]
    assert errors == []
    assert elapsed < 20, f"parsing + validating the testbed took {elapsed:.1f} s"
    assert all(len(c.arenas) == 1 for c in configs)
    assert sum(c.arena().agent is None for c in configs) == 24  # docs/animal-ai-facts.md §8
    assert sum(bool(c.arena().blackouts) for c in configs) == 126
    for config in configs[::7]:
        assert loads_config(dump_config(config)) == config


# -- property: any config the model can express survives dump + load ------------------------

number = st.one_of(st.integers(-1, 400), st.floats(-1, 400, allow_nan=False).map(
    lambda v: round(v, 3)))
vectors = st.builds(Vector3, number, number, number)
colors = st.builds(RGB, number, number, number)
items = st.builds(
    Item,
    name=st.sampled_from(["Wall", "GoodGoal", "Agent", "Ramp", "weird name: yes"]),
    positions=st.lists(vectors, max_size=3).map(tuple),
    rotations=st.lists(number.map(float), max_size=3).map(tuple),
    sizes=st.lists(vectors, max_size=3).map(tuple),
    colors=st.lists(colors, max_size=3).map(tuple),
    skins=st.lists(st.sampled_from(["hamster", "panda", "yes", "1"]), max_size=2).map(tuple),
)
arenas = st.builds(
    Arena,
    time_limit=st.integers(0, 10_000),
    pass_mark=number.map(float),
    items=st.lists(items, max_size=4).map(tuple),
    blackouts=st.lists(st.integers(-50, 500), max_size=4).map(tuple),
    random_seed=st.integers(0, 2**31 - 1),  # AAI reads it as a 32-bit int
    merge_next_arena=st.booleans(),
)
configs = st.builds(
    ArenaConfig,
    arenas=st.dictionaries(st.integers(-3, 20), arenas, min_size=1, max_size=3).map(
        lambda d: tuple(d.items())),
    randomize_arenas=st.booleans(),
    show_notification=st.booleans(),
    can_reset_episode=st.booleans(),
    can_change_perspective=st.booleans(),
)


@settings(max_examples=150, deadline=None)
@given(configs, st.sampled_from(["old", "new"]))
def test_dump_then_load_is_identity(config, spelling):
    assert loads_config(dump_config(config, spelling=spelling)) == config
