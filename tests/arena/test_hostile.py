"""Hostile arena files: each is refused with a file:line error, quickly, in bounded memory.

Every input is generated here (nothing large is committed). Cases that used to crash the
interpreter (libyaml's composer recursing 100,000 levels deep) run in a subprocess, which
also measures the CPU time and peak memory of the check.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from llm_aai.arena import limits, load_config
from llm_aai.arena.validate import errors_only, validate_config
from llm_aai.arena.yaml_io import check_file

TESTBED = Path(__file__).resolve().parents[2].parent / "shared" / "testbed" / "competition"
HEAD = "!ArenaConfig\narenas:\n  0: !Arena\n    t: 250\n"
WALL = "    - !Item {name: Wall, positions: [!Vector3 {x: 5, y: 0, z: 5}]}\n"

# Runs check_file in a fresh interpreter and reports what it printed, its CPU time and the
# process's peak resident memory (the interpreter and the imports included).
# The peak is read from /proc (VmHWM): getrusage's ru_maxrss survives exec, so a child would
# report the pytest process's own peak.
_MEASURE = """
import json, re, sys, time
from pathlib import Path
from llm_aai.arena.yaml_io import check_file
started = time.process_time()
problems = check_file(sys.argv[1])
cpu = time.process_time() - started
peak_kb = int(re.search(r"VmHWM:\\s*(\\d+)", Path("/proc/self/status").read_text()).group(1))
print(json.dumps({"problems": [str(p) for p in problems], "cpu_s": cpu, "peak_mb": peak_kb / 1024}))
"""


def measure_check(path: Path) -> dict:
    """Check ``path`` in a subprocess; fail on a crash, a hang or a traceback."""
    if not Path("/proc/self/status").is_file():
        pytest.skip("peak memory is read from Linux's /proc")
    done = subprocess.run([sys.executable, "-c", _MEASURE, str(path)], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, f"crashed ({done.returncode}): {done.stderr[-2000:]}"
    assert "Traceback" not in done.stderr
    return json.loads(done.stdout)


def nested(depth: int) -> str:
    return HEAD + "    items: " + "[" * depth + "]" * depth + "\n"


ALIAS_KEYS = ("delays", "initialValues", "finalValues", "changeRates", "ripenTimes",
              "moveDurations", "resetDurations", "doorDelays", "spawnCounts")


def alias_bomb(levels: int = 9) -> str:
    """A valid-looking item whose lists nest ten aliases a level: 10**levels values, 500 bytes."""
    lines = [HEAD + "    items:", "    - !Item", "      name: Wall",
             f"      {ALIAS_KEYS[0]}: &l0 [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]"]
    lines += [f"      {ALIAS_KEYS[i]}: &l{i} [" + ", ".join([f"*l{i - 1}"] * 10) + "]"
              for i in range(1, levels)]
    return "\n".join(lines) + "\n"


def walls(instances: int) -> str:
    """One Wall item with ``instances`` positions, on one line."""
    positions = ", ".join(["!Vector3 {x: 1, y: 0, z: 1}"] * instances)
    return f"    - !Item {{name: Wall, positions: [{positions}]}}\n"


def many_items(count: int) -> str:
    return HEAD + "    items:\n" + WALL * count


HOSTILE = {
    # name: (text, line of the error, start of the message after "file:line: ")
    "nested 100,000 deep": (nested(100_000), 5, "yaml: nested more than 32 levels deep"),
    "nested 1,000 deep": (nested(1_000), 5, "yaml: nested more than 32 levels deep"),
    "alias bomb": (alias_bomb(), 12, "yaml: more than 100,000 values once aliases"),
    "5,000-digit integer": (HEAD.replace("250", "9" * 5000) + "    items: []\n", 4,
                            "yaml: a value of 5,000 characters"),
    "400-digit t": (HEAD.replace("250", "9" * 400) + "    items: []\n", 4,
                    "t: a 400-digit number is beyond the range of AAI's 32-bit numbers"),
    "t 1e308": (HEAD.replace("250", "1e308") + "    items: []\n", 4,
                "t: 1e+308 is beyond the range of AAI's 32-bit numbers"),
    "t one past int32": (HEAD.replace("250", str(2**31)) + "    items: []\n", 4,
                         "t: 2.14748e+09 is beyond the range of AAI's 32-bit integers"),
    "too many items": (many_items(limits.MAX_ITEMS + 1), 5, "items: 501 entries; the limit"),
    "too many objects": (HEAD + "    items:\n" + walls(300) + walls(201), 5,
                         "items: 501 objects (every instance of every item); the limit is 500"),
    "too many positions": (HEAD + "    items:\n" + walls(501), 6,
                           "positions: 501 entries; the limit is 500"),
    "recursive alias": (HEAD + "    items: &loop [*loop]\n", 5, "yaml: "),
    "impossible date": (HEAD + "    items: []\n    random_seed: 2024-13-45\n", 6,
                        "yaml: cannot read this value"),
}


@pytest.mark.parametrize("name", list(HOSTILE))
def test_hostile_file_gets_one_located_error(tmp_path, name):
    text, line, message = HOSTILE[name]
    path = tmp_path / "hostile.yaml"
    path.write_text(text)
    measured = measure_check(path)
    errors = [p for p in measured["problems"] if ": warning: " not in p]
    assert len(errors) == 1, errors
    assert errors[0].startswith(f"{path}:{line}: {message}"), errors[0]
    # generous margins: each of these is refused in well under a second and 100 MB
    assert measured["cpu_s"] < 2.0
    assert measured["peak_mb"] < 200


def test_a_50_megabyte_file_is_refused_without_reading_it_whole(tmp_path):
    path = tmp_path / "huge.yaml"
    with open(path, "w") as handle:  # 700,000 items, about 50 MB
        handle.write(HEAD + "    items:\n")
        for _ in range(100):
            handle.write(WALL * 7000)
    assert path.stat().st_size > 40e6
    line = (limits.MAX_FILE_BYTES - len(HEAD) - len("    items:\n")) // len(WALL) + 6
    measured = measure_check(path)
    assert measured["problems"] == [
        f"{path}:{line}: size: the file is larger than the limit of 1,048,576 bytes (it passes "
        "it on this line); an arena file is a few kilobytes"]
    assert measured["cpu_s"] < 2.0
    assert measured["peak_mb"] < 200


def test_the_largest_file_within_the_limits_loads_quickly(tmp_path):
    """Close to every limit at once and still accepted: the limits bound the work."""
    values = ", ".join(["1"] * limits.MAX_ENTRIES)
    keys = ("delays", "initialValues", "finalValues", "changeRates", "ripenTimes")
    item = "    - !Item\n      name: Wall\n" + "".join(f"      {k}: [{values}]\n" for k in keys)
    per_item = 2 + len(keys) * (limits.MAX_ENTRIES + 2)
    path = tmp_path / "largest.yaml"
    path.write_text(HEAD + "    items:\n" + item * ((limits.MAX_NODES - 10) // per_item))
    measured = measure_check(path)
    assert [p for p in measured["problems"] if ": warning: " not in p] == []
    assert measured["cpu_s"] < 2.0
    assert measured["peak_mb"] < 200


NUMERIC_FIELDS = {
    # field: (YAML lines of an arena with the field out of range, error line, field named)
    "t": ("    t: 1e39\n    items: []\n", 4, "t"),
    "timeLimit": ("    timeLimit: -2147483649\n    items: []\n", 4, "timeLimit"),
    "pass_mark": ("    t: 10\n    pass_mark: -4e38\n    items: []\n", 5, "pass_mark"),
    "random_seed": ("    t: 10\n    random_seed: 3000000000\n    items: []\n", 5, "random_seed"),
    "blackouts": ("    t: 10\n    blackouts: [1, 99999999999]\n    items: []\n", 5, "blackouts"),
    "positions": ("    t: 10\n    items:\n    - !Item\n      name: Wall\n      positions:\n"
                  "      - !Vector3 {x: 1, y: 1e39, z: 1}\n", 9, "positions.y"),
    "position height": ("    t: 10\n    items:\n    - !Item\n      name: Wall\n      positions:\n"
                        "      - !Vector3 {x: 1, y: 20000, z: 1}\n", 9, "positions"),
    "sizes": ("    t: 10\n    items:\n    - !Item\n      name: Wall\n      sizes:\n"
              "      - !Vector3 {x: 1, y: 1, z: " + "9" * 40 + "}\n", 9, "sizes.z"),
    "rotations": ("    t: 10\n    items:\n    - !Item\n      name: Wall\n"
                  "      rotations: [1e300]\n", 8, "rotations"),
    "colors": ("    t: 10\n    items:\n    - !Item\n      name: Wall\n      colors:\n"
               "      - !RGB {r: 1, g: 5e38, b: 1}\n", 9, "colors.g"),
    "frozenAgentDelays": ("    t: 10\n    items:\n    - !Item\n      name: Agent\n"
                          "      frozenAgentDelays: [1e40]\n", 8, "frozenAgentDelays"),
    "an optional key": ("    t: 10\n    items:\n    - !Item\n      name: Wall\n"
                        "      delays: [1, 1e40]\n", 8, "delays"),
}


@pytest.mark.parametrize("name", list(NUMERIC_FIELDS))
def test_every_numeric_field_is_bounded_by_name(tmp_path, name):
    body, line, field = NUMERIC_FIELDS[name]
    path = tmp_path / "numbers.yaml"
    path.write_text("!ArenaConfig\narenas:\n  0: !Arena\n" + body)
    errors = errors_only(check_file(path))
    assert len(errors) == 1, [str(e) for e in errors]
    assert (errors[0].line, errors[0].field) == (line, field), str(errors[0])


def test_an_arena_id_beyond_int32_is_refused(tmp_path):
    path = tmp_path / "ids.yaml"
    path.write_text(f"!ArenaConfig\narenas:\n  {2**40}: !Arena\n    t: 10\n    items: []\n")
    errors = errors_only(check_file(path))
    assert [(e.line, e.field) for e in errors] == [(3, "arenas")]


def test_values_at_the_limits_are_accepted(tmp_path):
    path = tmp_path / "edge.yaml"
    path.write_text(
        "!ArenaConfig\narenas:\n  2147483647: !Arena\n    t: 2147483647\n"
        "    pass_mark: 3.4e38\n    random_seed: -2147483648\n    blackouts: [2147483647]\n"
        "    items:\n    - !Item\n      name: Wall\n"
        "      positions: [!Vector3 {x: 40, y: 10000, z: 0}]\n      rotations: [3.4e38]\n")
    assert errors_only(check_file(path)) == []


@pytest.mark.skipif(not TESTBED.is_dir(), reason="the official testbed is not beside the repo")
def test_every_official_arena_is_well_within_the_limits():
    """The limits leave room: the testbed needs at most a third of each."""
    stats = {"bytes": 0, "items": 0, "entries": 0, "objects": 0}
    for path in sorted(TESTBED.glob("*.yaml")):
        stats["bytes"] = max(stats["bytes"], path.stat().st_size)
        config = load_config(path, check=False)
        assert errors_only(validate_config(config)) == [], path
        for _, arena in config.arenas:
            counts = [item.instance_count for item in arena.items]
            stats["items"] = max(stats["items"], len(arena.items))
            stats["objects"] = max(stats["objects"], sum(counts))
            stats["entries"] = max(stats["entries"], *counts)
    assert stats["bytes"] * 3 < limits.MAX_FILE_BYTES
    assert stats["items"] * 3 < limits.MAX_ITEMS
    assert stats["entries"] * 3 < limits.MAX_ENTRIES
    assert stats["objects"] * 3 < limits.MAX_OBJECTS


@pytest.mark.parametrize("name", ["nested 100,000 deep", "alias bomb", "t 1e308"])
def test_run_refuses_a_hostile_arena_before_writing_anything(tmp_path, name):
    """These used to crash the run (a segfault, a hang, an OverflowError mid-episode)."""
    text, line, message = HOSTILE[name]
    arenas, out = tmp_path / "arenas", tmp_path / "out"
    arenas.mkdir()
    (arenas / "01-04-03.yaml").write_text(text)
    done = subprocess.run(
        [sys.executable, "-m", "llm_aai.run", "--model", "heuristic", "--tasks", "01-04-03",
         "--arenas-dir", str(arenas), "--out", str(out), "--run-id", "r", "--no-progress"],
        capture_output=True, text=True, timeout=120)
    assert done.returncode not in (0, -11), done.stderr  # refused, not crashed
    assert "Traceback" not in done.stderr
    assert f"01-04-03.yaml:{line}: {message}" in done.stderr
    assert not (out / "r").exists()
