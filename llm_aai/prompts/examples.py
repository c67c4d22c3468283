"""Worked examples: a recorded episode that is shown to the model before its own (experiment 2).

An example is a folder holding ``example.json``, the PNG frames it refers to and, when
known, a copy of the arena it was played in::

    llm_aai/prompts/worked_examples/tutorial-v1/
      example.json      format, name, provenance, arena hash, and one entry per turn
      arena.yaml        the arena (so the example can be replayed and checked)
      turn-000-0.png    the frames shown after each turn (three for turn 0)

Each turn stores what a player was shown after it (preamble, frame files, health text)
together with the script that led to it, the health, reward and events. The texts are
stored verbatim, as the runner sent them (or would have), so the conversation rebuilt from
an example is byte-for-byte what was recorded, whatever later happens to the wording of the
turn messages. ``example.json`` pins every frame and the arena by SHA-256, so the example's
own hash (the SHA-256 of ``example.json``) covers all of it; loading checks every file.

Examples come from two places: ``record_example`` turns a list of ``PlayedTurn`` from
``llm_aai.playback`` into one (``python -m llm_aai.play ARENA --scripts-file F
--record-example DIR``), and ``example_from_episode`` turns any logged run episode into one
(``python -m llm_aai.prompts.examples EPISODE_DIR --out DIR``), so a human's play or a
model's good episode can serve as the demonstration.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from llm_aai.agents.base import PriorTurn, TurnInput
from llm_aai.arena.checksum import file_sha256
from llm_aai.frames import read_frame
from llm_aai.logs import SchemaError, read_manifest, read_result, read_turns
from llm_aai.logs.frame_files import FrameOutside, frame_file
from llm_aai.logs.store import MANIFEST

__all__ = [
    "EXAMPLES_DIR",
    "EXAMPLE_FILE",
    "FORMAT",
    "Example",
    "ExampleError",
    "ExampleTurn",
    "example_from_episode",
    "load_example",
    "record_example",
    "resolve_example",
]

FORMAT = 1
EXAMPLE_FILE = "example.json"
ARENA_FILE = "arena.yaml"
#: Where named examples live: package data, so a wheel install has them too.
EXAMPLES_DIR = Path(__file__).resolve().parent / "worked_examples"


class ExampleError(ValueError):
    """An example folder is missing, malformed or does not match its recorded hashes."""


@dataclass(frozen=True)
class ExampleTurn:
    """One turn of a worked example.

    Attributes:
        turn: 0 for the initial observations, then 1.. for each script.
        script: the reply that produced this turn (None for turn 0).
        frames: the images shown after this turn, (H, W, 3) uint8.
        preamble: text shown before the frames (with feedback if ``script`` was invalid).
        text: text shown after the frames (the health line, or the end-of-level message).
        health: health after the turn as shown (None if the source did not record it).
        reward: reward gained during the turn.
        done: the episode ended in this turn.
        steps: AAI steps taken during the turn.
        events: reward event kinds of the turn (goals, zones).
        error: why ``script`` was not played, if it did not parse.

    """

    turn: int
    script: str | None
    frames: tuple[np.ndarray, ...]
    preamble: str
    text: str
    health: float | None
    reward: float = 0.0
    done: bool = False
    steps: int = 0
    events: tuple[str, ...] = ()
    error: str | None = None


@dataclass(frozen=True)
class Example:
    """A worked example: its turns, provenance and (once saved or loaded) its hash.

    Attributes:
        name: short name, e.g. ``tutorial-v1``.
        turns: the turns in order, turn 0 first.
        description: one paragraph for people reading the folder.
        source: provenance (how it was played or which episode it came from).
        arena_yaml: the arena's text, if known.
        sha256: SHA-256 of ``example.json`` (None before the example is saved).
        directory: the folder it was loaded from.
        rendering: how its turns were re-rendered for the run (``observation``, ``frame``
            and the worded views' sha256, ``llm_aai.prompts.text_example``); None as recorded.

    """

    name: str
    turns: tuple[ExampleTurn, ...]
    description: str = ""
    source: Mapping[str, Any] = field(default_factory=dict)
    arena_yaml: str | None = None
    sha256: str | None = None
    directory: Path | None = None
    rendering: Mapping[str, Any] | None = None

    @property
    def scripts(self) -> tuple[str, ...]:
        """The scripts in order (turns 1..)."""
        return tuple(t.script for t in self.turns[1:] if t.script is not None)

    @property
    def arena_path(self) -> Path | None:
        """The saved arena copy, if the example has one and was loaded from a folder."""
        if self.directory is None or self.arena_yaml is None:
            return None
        return self.directory / ARENA_FILE

    def prelude(self) -> tuple[PriorTurn, ...]:
        """The example as earlier exchanges: what was shown, then the script that answered.

        The frames and text after the last script are not included: the conversation
        continues with the episode's first observation, so the prelude ends with the
        assistant's last script (as in the paper's appendix D).
        """
        exchanges = []
        for shown, answer in zip(self.turns, self.turns[1:], strict=False):
            if answer.script is None:
                raise ExampleError(f"example {self.name}: turn {answer.turn} has no script")
            exchanges.append(PriorTurn(
                TurnInput(images=shown.frames, text=shown.text, preamble=shown.preamble),
                answer.script))
        return tuple(exchanges)

    def manifest(self) -> dict[str, Any]:
        """What a run manifest records about the example."""
        record = {"name": self.name, "sha256": self.sha256,
                  "path": None if self.directory is None else str(self.directory),
                  "scripts": len(self.scripts),
                  "images": sum(len(t.frames) for t in self.turns[:-1])}
        if self.rendering is not None:
            record["rendering"] = dict(self.rendering)
        return record

    def save(self, directory: str | Path, *, resolution: int | None = None) -> Example:
        """Write the example folder (replacing its files) and return it loaded back.

        Args:
            directory: target folder; created if needed. Old ``turn-*.png`` files there are
                removed so no stale frame survives a re-recording.
            resolution: if given, frames are resized to this square side first.

        """
        from PIL import Image

        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        for stale in directory.glob("turn-*.png"):
            stale.unlink()
        turns = []
        for turn in self.turns:
            frames = []
            for index, frame in enumerate(turn.frames):
                name = f"turn-{turn.turn:03d}-{index}.png"
                image = Image.fromarray(np.asarray(frame, dtype=np.uint8)[:, :, :3])
                if resolution is not None and image.size != (resolution, resolution):
                    image = image.resize((resolution, resolution), Image.Resampling.LANCZOS)
                image.save(directory / name, optimize=True)
                frames.append({"file": name, "sha256": file_sha256(directory / name)})
            turns.append({
                "turn": turn.turn, "script": turn.script, "error": turn.error,
                "preamble": turn.preamble, "text": turn.text,
                "health": None if turn.health is None else round(turn.health, 4),
                "reward": round(turn.reward, 6), "done": turn.done, "steps": turn.steps,
                "events": list(turn.events), "frames": frames,
            })
        arena = None
        if self.arena_yaml is not None:
            (directory / ARENA_FILE).write_text(self.arena_yaml, encoding="utf-8")
            arena = {"file": ARENA_FILE, "sha256": file_sha256(directory / ARENA_FILE)}
        data = {"format": FORMAT, "name": self.name, "description": self.description,
                "source": dict(self.source), "arena": arena, "turns": turns}
        (directory / EXAMPLE_FILE).write_text(
            json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        return load_example(directory)


def resolve_example(name_or_path: str | Path) -> Path:
    """Find an example folder by path, or by name under :data:`EXAMPLES_DIR`."""
    candidate = Path(name_or_path)
    if (candidate / EXAMPLE_FILE).is_file():
        return candidate
    named = EXAMPLES_DIR / str(name_or_path)
    if (named / EXAMPLE_FILE).is_file():
        return named
    known = sorted(p.parent.name for p in EXAMPLES_DIR.glob(f"*/{EXAMPLE_FILE}"))
    raise ExampleError(f"no worked example {str(name_or_path)!r}: not a folder with "
                       f"{EXAMPLE_FILE}, and not one of {known} in {EXAMPLES_DIR}")


def _require(data: Mapping[str, Any], key: str, kinds: type | tuple[type, ...], where: str) -> Any:
    if key not in data:
        raise ExampleError(f"{where}: missing field {key!r}")
    value = data[key]
    if not isinstance(value, kinds):
        raise ExampleError(f"{where}: field {key!r} has the wrong type ({type(value).__name__})")
    return value


def _load_frame(path: Path, expected_sha: str, where: str) -> np.ndarray:
    from PIL import Image

    if not path.is_file():
        raise ExampleError(f"{where}: frame file {path} is missing")
    actual = file_sha256(path)
    if actual != expected_sha:
        raise ExampleError(f"{where}: frame {path.name} has SHA-256 {actual[:12]}..., "
                           f"example.json records {expected_sha[:12]}...")
    with Image.open(path) as image:
        return np.asarray(image.convert("RGB"))


def load_example(name_or_path: str | Path) -> Example:
    """Load and verify an example folder (or a named example under ``EXAMPLES_DIR``).

    Raises:
        ExampleError: missing folder or file, malformed ``example.json`` (the message names
            the file and the turn/field), or a frame or arena whose hash does not match.

    """
    directory = resolve_example(name_or_path)
    path = directory / EXAMPLE_FILE
    raw = path.read_bytes()
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ExampleError(f"{path}: not valid JSON: {error}") from error
    if not isinstance(data, dict):
        raise ExampleError(f"{path}: expected a JSON object")
    if data.get("format") != FORMAT:
        raise ExampleError(f"{path}: format {data.get('format')!r}; this llm-aai reads {FORMAT}")
    name = _require(data, "name", str, str(path))
    arena_yaml = None
    arena = data.get("arena")
    if arena is not None:
        arena_file = directory / _require(arena, "file", str, f"{path}: arena")
        if not arena_file.is_file() or file_sha256(arena_file) != arena.get("sha256"):
            raise ExampleError(f"{path}: arena file {arena_file.name} is missing or does not "
                               f"match its recorded SHA-256")
        arena_yaml = arena_file.read_text(encoding="utf-8")
    turns = []
    for index, item in enumerate(_require(data, "turns", list, str(path))):
        where = f"{path}: turns[{index}]"
        if not isinstance(item, dict):
            raise ExampleError(f"{where}: expected an object")
        frames = tuple(
            _load_frame(directory / _require(f, "file", str, where),
                        _require(f, "sha256", str, where), where)
            for f in _require(item, "frames", list, where))
        health = item.get("health")
        if health is not None and not isinstance(health, int | float):
            raise ExampleError(f"{where}: field 'health' must be a number or null")
        turns.append(ExampleTurn(
            turn=_require(item, "turn", int, where),
            script=item.get("script"),
            frames=frames,
            preamble=_require(item, "preamble", str, where),
            text=_require(item, "text", str, where),
            health=None if health is None else float(health),
            reward=float(_require(item, "reward", int | float, where)),
            done=bool(_require(item, "done", bool, where)),
            steps=int(item.get("steps", 0)),
            events=tuple(item.get("events", ())),
            error=item.get("error"),
        ))
    if not turns or turns[0].turn != 0:
        raise ExampleError(f"{path}: the first turn must be turn 0 (the initial observations)")
    if [t.turn for t in turns] != list(range(len(turns))):
        raise ExampleError(f"{path}: turns must be numbered 0, 1, 2... without gaps")
    return Example(name=name, turns=tuple(turns), description=str(data.get("description", "")),
                   source=dict(data.get("source") or {}), arena_yaml=arena_yaml,
                   sha256=hashlib.sha256(raw).hexdigest(), directory=directory)


def record_example(
    name: str,
    played: Sequence[Any],
    messages: Any,
    *,
    arena_path: str | Path | None = None,
    description: str = "",
    source: Mapping[str, Any] | None = None,
) -> Example:
    """Build an example from turns played by ``llm_aai.playback.play_scripts``.

    The texts are rendered as the runner renders them: ``messages.preamble`` before the
    frames (after the feedback for an invalid script), ``messages.initial`` after turn 0,
    ``messages.observation`` after each script, and ``messages.episode_end`` after the one
    that ends the episode.

    Args:
        name: the example's name.
        played: ``PlayedTurn`` objects, turn 0 first.
        messages: the prompt's ``TurnMessages``.
        arena_path: the arena file played (copied into the example).
        description: free text.
        source: provenance (backend, seed, protocol...).

    """
    turns = []
    total = 0.0
    for played_turn in played:
        total += played_turn.reward
        preamble = messages.preamble
        if played_turn.error is not None:
            preamble = f"{messages.invalid_reply(played_turn.error)}\n\n{preamble}"
        if played_turn.done:
            text = messages.episode_end(total, played_turn.health)
        elif played_turn.turn == 0:
            text = messages.initial(played_turn.health)
        else:
            text = messages.observation(played_turn.health)
        turns.append(ExampleTurn(
            turn=played_turn.turn, script=played_turn.script, frames=played_turn.frames,
            preamble=preamble, text=text, health=played_turn.health,
            reward=played_turn.reward, done=played_turn.done, steps=played_turn.steps,
            events=played_turn.events, error=played_turn.error))
    arena_yaml = None if arena_path is None else Path(arena_path).read_text(encoding="utf-8")
    return Example(name=name, turns=tuple(turns), description=description,
                   source=dict(source or {}), arena_yaml=arena_yaml)


def example_from_episode(
    episode_dir: str | Path,
    *,
    name: str | None = None,
    arena_path: str | Path | None = None,
    description: str = "",
) -> Example:
    """Build an example from a logged run episode (any agent, human play included).

    The conversation is taken verbatim from ``turns.jsonl``: the first reply record gives
    turn 0 (what was shown before the first script), and each reply record gives a turn
    whose frames and texts are those the *next* record sent (the closing record, after the
    last script, shows the final frame and the end-of-level message). Health after turn 0
    is known only if the log has a turn-0 record.

    Args:
        episode_dir: ``results/<run>/episodes/<episode-id>``.
        name: the example's name (default: the episode directory's name).
        arena_path: the arena file the episode played, to copy into the example.
        description: free text.

    Raises:
        ExampleError: the episode has no scripted turn, or a frame it names is missing.

    """
    episode_dir = Path(episode_dir)
    records = sorted(read_turns(episode_dir), key=lambda r: r.turn)
    replied = [r for r in records if r.reply is not None]
    if not replied:
        raise ExampleError(f"{episode_dir}: the episode has no turn with a reply")

    def frames_of(record: Any) -> tuple[np.ndarray, ...]:
        images = []
        for relative in record.sent_images:
            try:
                frame_path = frame_file(episode_dir, relative)
            except FrameOutside as error:
                raise ExampleError(f"{episode_dir}: turn {record.turn}: {error}") from None
            if not frame_path.is_file():
                raise ExampleError(f"{episode_dir}: turn {record.turn} names a missing frame "
                                   f"{relative}")
            images.append(read_frame(frame_path))
        return tuple(images)

    zero = next((r for r in records if r.turn == 0 and r.reply is None), None)
    first = replied[0]
    # turn 0's logged health is after all the initial no-ops, not the one shown with the
    # first observation (that is only in ``first.sent_text``), so it is not recorded here
    turns = [ExampleTurn(turn=0, script=None, frames=frames_of(first),
                         preamble=first.sent_preamble, text=first.sent_text,
                         health=None,
                         reward=0.0 if zero is None else zero.reward,
                         done=False, steps=0 if zero is None else zero.steps)]
    for number, record in enumerate(replied, start=1):
        shown = next((r for r in records if r.turn > record.turn), None)
        turns.append(ExampleTurn(
            turn=number, script=record.reply,
            frames=() if shown is None else frames_of(shown),
            preamble="" if shown is None else shown.sent_preamble,
            text="" if shown is None else shown.sent_text,
            health=record.health, reward=record.reward,
            done=record.terminated or record.truncated, steps=record.steps,
            events=tuple(e.get("kind", "") for e in record.events),
            error=record.parse_error))
    source: dict[str, Any] = {"kind": "episode", "episode_dir": str(episode_dir)}
    if (episode_dir / "result.json").is_file():
        result = read_result(episode_dir)
        source.update(episode_id=result.episode_id, task_id=result.task_id, seed=result.seed,
                      agent=result.agent, passed=result.passed, reward=result.reward,
                      end_reason=result.end_reason)
    run_dir = episode_dir.parent.parent
    if (run_dir / MANIFEST).is_file():
        manifest = read_manifest(run_dir)
        source["run_id"] = manifest.run_id
        source["prompt"] = manifest.prompt.get("name")
        task = source.get("task_id")
        if task and manifest.arena_sha256(task) is not None:
            source["arena_sha256"] = manifest.arena_sha256(task)
    arena_yaml = None if arena_path is None else Path(arena_path).read_text(encoding="utf-8")
    return Example(name=name or episode_dir.name, turns=tuple(turns), description=description,
                   source=source, arena_yaml=arena_yaml)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m llm_aai.prompts.examples EPISODE_DIR --out DIR``: example from a run log."""
    parser = argparse.ArgumentParser(
        prog="python -m llm_aai.prompts.examples",
        description="Turn a logged episode (any agent, human play included) into a worked "
                    "example for the icl prompt.")
    parser.add_argument("episode_dir", type=Path, help="results/<run>/episodes/<episode-id>")
    parser.add_argument("--out", type=Path, required=True, help="example folder to write")
    parser.add_argument("--name", help="example name (default: the --out folder's name)")
    parser.add_argument("--arena", type=Path, help="the arena file the episode played")
    parser.add_argument("--resolution", type=int, default=256,
                        help="side of the saved frames in pixels (default 256)")
    parser.add_argument("--description", default="")
    args = parser.parse_args(argv)

    try:
        example = example_from_episode(args.episode_dir, name=args.name or args.out.name,
                                       arena_path=args.arena, description=args.description)
        saved = example.save(args.out, resolution=args.resolution)
    except (ExampleError, SchemaError, OSError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    print(json.dumps({"example": str(args.out), "name": saved.name, "sha256": saved.sha256,
                      "scripts": len(saved.scripts)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
