from llm_aai.arena import loads_config, validate_config
from llm_aai.arena.validate import check_file, errors_only

HEAD = "!ArenaConfig\narenas:\n  {id}: !Arena\n    t: 250\n    items:\n"


def problems(items_yaml, arena_id=0):
    config = loads_config(HEAD.format(id=arena_id) + items_yaml, source="v.yaml")
    return [(p.severity, str(p)) for p in validate_config(config)]


def test_values_aai_accepts_but_changes_are_warnings_not_errors():
    found = problems(
        "    - !Item\n      name: Wall\n      positions:\n      - !Vector3 {x: -2, y: 60, z: 3}\n"
        "      sizes:\n      - !Vector3 {x: 50, y: 0, z: -1}\n      rotations: [-5]\n"
        "      colors:\n      - !RGB {r: 300, g: -1, b: 0}\n"
        "    - !Item\n      name: DecoyGoal\n", arena_id=-1)
    assert all(severity == "warning" for severity, _ in found)
    text = "\n".join(message for _, message in found)
    assert "v.yaml:3: warning: arenas: negative arena id -1" in text
    assert "v.yaml:9: warning: positions: -2 is negative: AAI treats it as random" in text
    assert "v.yaml:9: warning: positions: y=60 is far above the arena" in text
    assert "v.yaml:11: warning: sizes: x=50 is above Wall's maximum 40; AAI clamps it" in text
    assert "y=0" not in text  # a zero size is clamped to the minimum silently (testbed uses it)
    assert "v.yaml:12: warning: rotations: -5 is negative" in text
    assert "v.yaml:14: warning: colors: r=300 is above 255" in text
    assert "v.yaml:16: warning: name: DecoyGoal is an AAI object the embedded simulator" in text
    assert len(found) == 7


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
