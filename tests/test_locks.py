"""The three lock files: the demo's runtime, the tested set on top of it, the animalai client.

``make demo`` installs ``requirements.lock`` alone, so it must not carry the test tools (the
1.8 GB that made a newcomer's first command take eight minutes); ``make test`` installs
``requirements-test.lock`` over it, and ``make animalai`` ``requirements-unity.lock``, so a
package pinned in two of them must be the same file in both, or the second install would
replace what the first one checked.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

REPO = Path(__file__).resolve().parents[1]
RUNTIME, TESTED, UNITY = (REPO / name for name in (
    "requirements.lock", "requirements-test.lock", "requirements-unity.lock"))
PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+)(?:\s*;\s*([^\\]+?))?\s*\\?$")
HASH = re.compile(r"--hash=sha256:([0-9a-f]{64})")


def pins(text: str) -> dict[tuple[str, str, str], set[str]]:
    """Every pin of a lock's text, (name, version, marker) -> its hashes."""
    found: dict[tuple[str, str, str], set[str]] = {}
    current = None
    for line in text.splitlines():
        if match := PIN.match(line):
            name, version, marker = match.groups()
            current = (canonicalize_name(name), version, (marker or "").strip())
            found[current] = set()
        if current is not None:
            found[current].update(HASH.findall(line))
    return found


def names(text: str) -> set[str]:
    return {name for name, _, _ in pins(text)}


def pyproject() -> dict:
    return tomllib.loads((REPO / "pyproject.toml").read_text())["project"]


def requirement_names(lines: list[str]) -> set[str]:
    return {canonicalize_name(Requirement(line).name) for line in lines}


def disagreements(base: str, other: str) -> list[str]:
    """The pins of ``other`` whose name ``base`` pins at another version or with other files."""
    by_name: dict[str, dict[tuple[str, str], set[str]]] = {}
    for (name, version, marker), hashes in pins(base).items():
        by_name.setdefault(name, {})[(version, marker)] = hashes
    found = []
    for (name, version, _), hashes in pins(other).items():
        if name not in by_name:
            continue
        matching = [h for (v, _), h in by_name[name].items() if v == version]
        if not matching:
            found.append(f"{name}=={version} (the other lock: {sorted(by_name[name])})")
        elif hashes not in matching:
            found.append(f"{name}=={version}: other files")
    return found


def test_every_pin_and_hash_is_read():
    for lock in (RUNTIME, TESTED, UNITY):
        text = lock.read_text()
        found = pins(text)
        assert sum(map(len, found.values())) == text.count("--hash=sha256:"), lock.name
        assert all(found.values()), f"{lock.name}: a pin without a hash"
        assert len(found) == len(re.findall(r"^[A-Za-z0-9]\S*==", text, re.MULTILINE))
    assert {"numpy", "mujoco", "litellm", "setuptools"} <= names(RUNTIME.read_text())


# The test tools and extras that made the demo's environment 1.8 GB; none is the runtime's.
TEST_ONLY = {"pytest", "hypothesis", "ray", "playwright", "inspect-ai", "ruff", "ipykernel",
             "statsmodels", "import-linter", "nbclient", "imageio-ffmpeg", "grpcio"}


def test_the_runtime_lock_holds_no_test_tool():
    assert not TEST_ONLY & requirement_names(pyproject()["dependencies"])
    assert TEST_ONLY <= names(TESTED.read_text())
    assert sorted(TEST_ONLY & names(RUNTIME.read_text())) == []


def test_each_lock_holds_what_its_target_installs():
    runtime = requirement_names(pyproject()["dependencies"]) | {"setuptools"}
    assert sorted(runtime - names(RUNTIME.read_text())) == []
    extras = pyproject()["optional-dependencies"]
    tested = requirement_names(sum((extras[e] for e in ("test", "dev", "bridge", "mp4",
                                                         "inspect")), []))
    assert sorted((runtime | tested) - names(TESTED.read_text())) == []
    assert names(RUNTIME.read_text()) <= names(TESTED.read_text())
    assert {"animalai", "mlagents-envs-aai", "grpcio", "protobuf"} <= names(UNITY.read_text())


def test_a_package_has_one_version_and_one_set_of_files_in_every_lock():
    tested = TESTED.read_text()
    assert disagreements(tested, RUNTIME.read_text()) == []
    assert disagreements(tested, UNITY.read_text()) == []


def test_a_lock_that_disagrees_is_found():
    tested = TESTED.read_text()
    (name, version, _), hashes = next(iter(pins(RUNTIME.read_text()).items()))
    moved = f"{name}=={version}.post99 \\\n    --hash=sha256:{min(hashes)}\n"
    assert disagreements(tested, moved) == [
        f"{name}=={version}.post99 (the other lock: "
        f"{sorted(k for k in ((v, m) for (n, v, m) in pins(tested) if n == name))})"]
    other_file = f"{name}=={version} \\\n    --hash=sha256:{'0' * 64}\n"
    assert disagreements(tested, other_file) == [f"{name}=={version}: other files"]
