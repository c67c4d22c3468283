"""Exact copies of a running simulation, to restore and continue bit for bit.

A search that plans by simulating needs to go back to where it was: ``Simulator.snapshot()``
returns a ``Snapshot`` and ``Simulator.restore(snapshot)`` puts the world back exactly, so
replaying the same actions gives the same states and frames, bit for bit.

Three kinds of state make up an episode:

- **MuJoCo's data**: copied whole with ``mj_copyData``. Not just the integration state
  (``qpos``, ``qvel``, warm start, applied forces, time): the physics corrections read
  quantities the last ``mj_step`` left behind, computed at the position *before* it integrated
  (``xmat``, ``xipos``, contacts and their forces), so a restore that only set the state and
  recomputed those at the new position would continue differently. The copy also carries
  MuJoCo's warning counters, which the stability watch reads.
- **Model fields written during an episode** (``MUTABLE_MODEL_FIELDS``): a collected multi
  goal is switched off in the model, and the floor friction writes its bounds into
  ``dof_frictionloss``. Code that starts writing another model field during an episode must
  add it there; ``tests/sim/test_snapshot.py`` compares every model field after a restore and
  fails if one is missed.
- **Python state** of the simulator and of every helper object it holds (agent physics,
  friction corrections, rules, goals, step counters...). It is captured *generically*, by
  walking the objects' attributes, so a correction added later is covered without a change
  here: every attribute is copied except references to the MuJoCo model and data, numpy views
  of MuJoCo's memory (restored with the data), the renderer, functions and frozen
  (immutable) dataclasses.

A snapshot addresses objects by attribute path, not identity, so it can be restored into
another ``Simulator`` loaded with the same placed arena (the oracle plans in its own
physics-only copy of an episode's world); ``restore`` refuses a snapshot of another world.
"""

from __future__ import annotations

import dataclasses
import types
from dataclasses import dataclass
from typing import Any

import numpy as np

MUTABLE_MODEL_FIELDS = (
    "geom_contype",
    "geom_conaffinity",
    "geom_rgba",
    "body_gravcomp",
    "dof_frictionloss",
)
"""MuJoCo model fields the simulator writes while an episode runs (see the module doc)."""

_SCALARS = (type(None), bool, int, float, str, bytes, complex, np.bool_, np.integer,
            np.floating)


class _Bound:
    """Marker: keep the target's own value (a binding to MuJoCo or the renderer)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<bound>"


BOUND = _Bound()


class _Copy:
    """A captured mutable value: what it was (``tag``) and its copied content."""

    __slots__ = ("tag", "kind", "content")

    def __init__(self, tag: str, content: Any, kind: type | None = None) -> None:
        self.tag, self.content, self.kind = tag, content, kind


@dataclass(frozen=True)
class Snapshot:
    """One instant of a simulation (see the module doc); opaque, restore it with the simulator.

    Attributes:
        world: fingerprint of the compiled world it belongs to (restore checks it).
        data: a private ``MjData`` holding the copy.
        model_fields: copies of ``MUTABLE_MODEL_FIELDS``.
        python: the captured Python state of the simulator object.
    """

    world: str
    data: Any
    model_fields: tuple[tuple[str, np.ndarray], ...]
    python: Any


def capture(obj: Any, bound: set[int], skip: tuple[str, ...] = ()) -> Any:
    """A copy of ``obj``'s attribute tree, with ``BOUND`` where a value must not be copied.

    Args:
        obj: an object whose state to copy.
        bound: ids of objects never copied (the MuJoCo model, data and the renderer).
        skip: attributes of ``obj`` itself to leave alone on restore (its own settings).
    """
    state = {name: BOUND if name in skip else _capture(value, bound)
             for name, value in vars(obj).items()}
    return _Copy("obj", state, type(obj))


def _capture(value: Any, bound: set[int]) -> Any:
    kind = type(value)
    if kind in _SCALARS or isinstance(value, _SCALARS):
        return value
    if id(value) in bound:
        return BOUND
    if kind is tuple:
        items = [_capture(item, bound) for item in value]
        if all(type(item) is not _Copy and item is not BOUND for item in items):
            return value  # immutable all the way down
        return _Copy("tuple", items)
    if kind is list:
        if all(type(item) in _SCALARS for item in value):
            return _Copy("scalars", value.copy())
        return _Copy("list", [_capture(item, bound) for item in value])
    if kind is dict:
        return _Copy("dict", {key: _capture(item, bound) for key, item in value.items()})
    if kind is set:
        return _Copy("set", set(value))
    if isinstance(value, np.ndarray):
        # A view (not owning its memory) looks into MuJoCo's buffers: restored with the data.
        return _Copy("array", value.copy()) if value.flags.owndata else BOUND
    if isinstance(value, (types.FunctionType, types.MethodType, types.BuiltinFunctionType,
                          type, BaseException, frozenset, range, slice)):
        return value  # immutable, or never changed in place
    if dataclasses.is_dataclass(value) and value.__dataclass_params__.frozen:
        return value
    state = getattr(value, "__dict__", None)
    if state is None:
        raise TypeError(f"cannot snapshot a {kind.__qualname__}: no __dict__ to copy; teach "
                        "llm_aai.sim.snapshot about it")
    return _Copy("obj", {name: _capture(item, bound) for name, item in state.items()}, kind)


def apply(target: Any, captured: Any) -> None:
    """Write a ``capture`` of an object of ``target``'s class back into ``target`` in place."""
    if type(target) is not captured.kind:
        raise TypeError(f"snapshot of a {captured.kind.__qualname__} restored into a "
                        f"{type(target).__qualname__}")
    _apply_state(target, captured.content)


def _apply_state(target: Any, state: dict[str, Any]) -> None:
    current = target.__dict__
    for name, captured in state.items():
        if captured is BOUND:
            continue
        current[name] = _rebuild(captured, current.get(name))


def _rebuild(captured: Any, current: Any) -> Any:
    if type(captured) is not _Copy:
        return captured  # scalars and immutables were kept as they were
    tag, content = captured.tag, captured.content
    if tag == "scalars":
        return content.copy()
    if tag == "list":
        old = current if type(current) is list and len(current) == len(content) else None
        return [old[i] if item is BOUND and old else _rebuild(item, old[i] if old else None)
                for i, item in enumerate(content)]
    if tag == "tuple":
        old = current if type(current) is tuple and len(current) == len(content) else None
        return tuple(old[i] if item is BOUND and old else _rebuild(item, old[i] if old else None)
                     for i, item in enumerate(content))
    if tag == "dict":
        old = current if type(current) is dict else {}
        return {key: old.get(key) if item is BOUND else _rebuild(item, old.get(key))
                for key, item in content.items()}
    if tag == "set":
        return set(content)
    if tag == "array":
        if isinstance(current, np.ndarray) and current.shape == content.shape:
            current[...] = content
            return current
        return content.copy()
    if tag == "obj":
        # Objects are updated in place, so references shared between helpers stay shared.
        kind = captured.kind
        target = current if type(current) is kind else kind.__new__(kind)
        _apply_state(target, content)
        return target
    raise AssertionError(f"unknown snapshot tag {tag!r}")
