import pytest

from llm_aai.arena import ArenaError, load_config, loads_config, validate_config
from llm_aai.arena.validate import errors_only
from llm_aai.arena.yaml_io import check_file

HEAD = "!ArenaConfig\narenas:\n  {id}: !Arena\n    t: 250\n    items:\n"


def problems(items_yaml, arena_id=0):
    config = loads_config(HEAD.format(id=arena_id) + items_yaml, source="v.yaml")
    return [(p.severity, str(p)) for p in validate_config(config)]


def test_values_aai_accepts_but_changes_are_warnings_not_errors():
    found = problems(
        "    - !Item\n      name: Wall\n      positions:\n      - !Vector3 {x: -2, y: 60, z: 3}\n"
        "      sizes:\n      - !Vector3 {x: 50, y: 0, z: -1}\n      rotations: [-5]\n"
        "      colors:\n      - !RGB {r: 300, g: -1, b: 0}\n"
        "    - !Item\n      name: SpawnerTree\n", arena_id=-1)
    assert all(severity == "warning" for severity, _ in found)
    text = "\n".join(message for _, message in found)
    assert "v.yaml:3: warning: arenas: negative arena id -1" in text
    assert "v.yaml:9: warning: positions: -2 is negative: AAI treats it as random" in text
    assert "v.yaml:9: warning: positions: y=60 is far above the arena" in text
    assert "v.yaml:11: warning: sizes: x=50 is above Wall's maximum 40; AAI clamps it" in text
    assert "y=0" not in text  # a zero size is clamped to the minimum silently (testbed uses it)
    assert "v.yaml:12: warning: rotations: -5 is negative" in text
    assert "v.yaml:14: warning: colors: r=300 is above 255" in text
    assert "v.yaml:16: warning: name: SpawnerTree is an AAI object the embedded simulator" in text
    assert len(found) == 7


@pytest.mark.parametrize("name", ["DecoyGoal", "DecoyGoalBounce", "DecoyGoalMulti",
                                  "BadGoalMulti"])
def test_the_decoys_and_bad_multis_are_built_not_skipped(name):
    assert problems(f"    - !Item\n      name: {name}\n") == []
    found = problems(f"    - !Item\n      name: {name}\n      sizes:\n"
                     "      - !Vector3 {x: 9, y: 1, z: 1}\n")
    assert found == [("warning", f"v.yaml:9: warning: sizes: x=9 is above {name}'s maximum 5; "
                                 "AAI clamps it")]


def test_goal_sizes_only_check_the_diameter():
    assert problems("    - !Item\n      name: GoodGoal\n      sizes:\n"
                    "      - !Vector3 {x: 1, y: 99, z: 99}\n") == []


def test_several_agents_are_warned_about():
    found = problems("    - !Item\n      name: Agent\n      rotations: [1, 2]\n"
                     "    - !Item\n      name: Agent\n")
    assert [m.split(": ", 1)[1] for _, m in found] == [
        "warning: positions: the Agent has several instances; AAI uses only the first",
        "warning: name: a second Agent item; AAI uses the first"]


def test_clean_file_has_no_problems(testbed_dir):
    assert check_file(testbed_dir / "01-01-01.yaml") == []


def test_load_failure_is_returned_not_raised(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("!ArenaConfig\narenas: [\n")
    found = errors_only(check_file(bad))
    assert len(found) == 1 and str(found[0]).startswith(f"{bad}:")


def test_loading_refuses_what_validate_calls_an_error(tmp_path):
    bad = tmp_path / "typo.yaml"
    bad.write_text(HEAD.format(id=0) + "    - !Item\n      name: Agent\n"
                   "    - !Item\n      name: GoodGoalz\n      positions:\n"
                   "      - !Vector3 {x: 20, y: 0, z: 20}\n")
    with pytest.raises(ArenaError) as info:
        load_config(bad)
    assert str(info.value) == str(errors_only(check_file(bad))[0]) == (
        f"{bad}:9: name: unknown object 'GoodGoalz' (did you mean GoodGoal or GoodGoalMulti "
        "or GrowGoal?); AAI would skip it")
    assert load_config(bad, check=False).arena().items[1].name == "GoodGoalz"


def test_loading_counts_the_other_errors_and_accepts_warnings(tmp_path):
    bad = tmp_path / "two.yaml"
    bad.write_text(HEAD.format(id=0) + "    - !Item\n      name: Wal\n"
                   "    - !Item\n      name: Wall\n      positions:\n"
                   "      - !Vector3 {x: 45, y: 0, z: 1}\n")
    with pytest.raises(ArenaError, match=r"two.yaml:7: name: unknown object 'Wal' .*\(and 1 "
                                         r"more error\(s\): python -m llm_aai.arenas validate"):
        load_config(bad)
    odd = tmp_path / "odd.yaml"
    odd.write_text(HEAD.format(id=0) + "    - !Item\n      name: SpawnerTree\n")
    assert load_config(odd).arena().items[0].name == "SpawnerTree"  # a warning only
