"""Inline SVG for the pages: the top-down arena map with paths, and the health curve.

SVG keeps the site free of JavaScript libraries: the browser draws it, it scales, and each
turn's marks carry ``data-turn`` so the page script can highlight the turn being read. Every
text that reaches the markup goes through ``escape``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from markupsafe import Markup, escape

from llm_aai.arena.geometry import ARENA_SIZE
from llm_aai.view.layout import Layout, heading

PATH_COLOURS = ("#d62728", "#1f77b4", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b",
                "#e377c2", "#7f7f7f", "#bcbd22")
"""One colour per path when several are overlaid (a task's episodes)."""


@dataclass(frozen=True)
class PathPoint:
    """Where a turn ended: Unity (x, z), yaw in degrees, and the turn's number."""

    turn: int
    x: float
    z: float
    yaw: float


@dataclass(frozen=True)
class AgentPath:
    """One episode's path: its points in order, a label and a link for overlaid maps."""

    points: tuple[PathPoint, ...]
    label: str = ""
    href: str = ""


def arena_map(layout: Layout | None, paths: Sequence[AgentPath], *, numbered: bool = True,
              title: str = "Top-down map", first_colour: int = 0) -> Markup:
    """The arena seen from above (+z up, +x right) with each path, its headings and turns.

    Args:
        layout: the placed arena, or None when its file is not available (paths only).
        paths: the paths to draw; with one path its turns are numbered and headings drawn.
        numbered: number each turn's end on the path (single-episode maps).
        title: the accessible title of the picture.
        first_colour: index in ``PATH_COLOURS`` of the first path's colour (so a small map
            of one episode matches its colour on the overlay).

    """
    size = layout.size if layout is not None else ARENA_SIZE
    parts = [f'<svg class="arena-map" viewBox="-1 -1 {size + 2:g} {size + 2:g}" '
             f'xmlns="http://www.w3.org/2000/svg" role="img">',
             f"<title>{escape(title)}</title>",
             f'<rect class="floor" x="0" y="0" width="{size:g}" height="{size:g}"/>']
    if layout is not None:
        parts.extend(_footprint(f, size) for f in layout.footprints)
        parts.append(_start(layout, size))
    for i, path in enumerate(paths):
        colour = PATH_COLOURS[(first_colour + i) % len(PATH_COLOURS)]
        parts.append(_path(path, size, colour, numbered=numbered and len(paths) == 1))
    parts.append("</svg>")
    return Markup("".join(parts))


def _y(z: float, size: float) -> float:
    return size - z


def _footprint(footprint, size: float) -> str:
    title = f"<title>{escape(footprint.name)}</title>"
    style = (f'class="obj obj-{escape(footprint.kind)}" fill="{footprint.colour}" '
             f'fill-opacity="{footprint.opacity:.2f}"')
    if footprint.circle is not None:
        x, z, r = footprint.circle
        return (f'<circle {style} cx="{x:.3f}" cy="{_y(z, size):.3f}" r="{r:.3f}">'
                f"{title}</circle>")
    points = " ".join(f"{x:.3f},{_y(z, size):.3f}" for x, z in footprint.points)
    return f'<polygon {style} points="{points}">{title}</polygon>'


def _start(layout: Layout, size: float) -> str:
    x, z = layout.start
    return (f'<g class="start"><circle cx="{x:.3f}" cy="{_y(z, size):.3f}" r="0.5"/>'
            f"{_arrow(x, z, layout.start_yaw, size, 'start-heading')}"
            "<title>agent's start</title></g>")


def _arrow(x: float, z: float, yaw: float, size: float, cls: str, length: float = 1.4,
           colour: str = "#000000") -> str:
    """A thin triangle from the agent's centre towards where it faces."""
    dx, dz = heading(yaw)
    half = length * 0.3
    tip = (x + length * dx, z + length * dz)
    left = (x - half * dz, z + half * dx)
    right = (x + half * dz, z - half * dx)
    points = " ".join(f"{px:.3f},{_y(pz, size):.3f}" for px, pz in (tip, left, right))
    return f'<polygon class="{cls}" points="{points}" fill="{colour}"/>'


def _path(path: AgentPath, size: float, colour: str, *, numbered: bool) -> str:
    if not path.points:
        return ""
    coords = " ".join(f"{p.x:.3f},{_y(p.z, size):.3f}" for p in path.points)
    label = escape(path.label)
    parts = [f'<g class="agent-path" data-label="{label}">',
             f"<title>{label}</title>" if label else "",
             f'<polyline class="path-line" points="{coords}" fill="none" stroke="{colour}"/>']
    for point in path.points:
        cx, cy = point.x, _y(point.z, size)
        parts.append(f'<g class="turn-mark" data-turn="{point.turn}">')
        if numbered:
            parts.append(_arrow(point.x, point.z, point.yaw, size, "heading", 1.1, colour))
        parts.append(f'<circle class="turn-dot" cx="{cx:.3f}" cy="{cy:.3f}" r="0.32" '
                     f'fill="{colour}"/>')
        if numbered and point.turn > 0:
            parts.append(f'<text class="turn-number" x="{cx + 0.45:.3f}" y="{cy - 0.45:.3f}">'
                         f"{point.turn}</text>")
        parts.append("</g>")
    parts.append("</g>")
    if path.href:
        return f'<a href="{escape(path.href)}">{"".join(parts)}</a>'
    return "".join(parts)


def health_curve(points: Sequence[tuple[int, float, int]], *, max_steps: int | None = None,
                 width: int = 640, height: int = 170) -> Markup:
    """Health over the episode's steps, one marked point where each turn ended.

    Args:
        points: ``(cumulative steps, health, turn)`` in order, the first at the start.
        max_steps: the x axis' end (the episode's step limit); defaults to the last point.
        width: the drawing's width in SVG units (it scales with the page).
        height: the drawing's height in SVG units.

    """
    left, right, top, bottom = 40, 12, 10, 28
    last = max([max_steps or 0, *(s for s, _, _ in points), 1])
    plot_w, plot_h = width - left - right, height - top - bottom

    def sx(steps: float) -> float:
        return left + plot_w * steps / last

    def sy(health: float) -> float:
        return top + plot_h * (1 - max(0.0, min(100.0, health)) / 100)

    parts = [f'<svg class="health-curve" viewBox="0 0 {width} {height}" '
             'xmlns="http://www.w3.org/2000/svg" role="img"><title>Health over agent steps</title>']
    for value in (0, 50, 100):
        parts.append(f'<line class="grid" x1="{left}" x2="{width - right}" y1="{sy(value):.1f}" '
                     f'y2="{sy(value):.1f}"/><text class="tick" x="{left - 6}" '
                     f'y="{sy(value) + 4:.1f}" text-anchor="end">{value}</text>')
    parts.append(f'<text class="tick" x="{width - right}" y="{height - 6}" text-anchor="end">'
                 f"{last} agent steps</text>"
                 f'<text class="tick" x="{left}" y="{height - 6}">0</text>')
    if points:
        coords = " ".join(f"{sx(s):.1f},{sy(h):.1f}" for s, h, _ in points)
        parts.append(f'<polyline class="health-line" points="{coords}" fill="none"/>')
        for steps, health, turn in points:
            parts.append(f'<circle class="turn-dot" data-turn="{turn}" cx="{sx(steps):.1f}" '
                         f'cy="{sy(health):.1f}" r="3"><title>turn {turn}: health '
                         f"{health:.1f} after {steps} agent steps</title></circle>")
    parts.append("</svg>")
    return Markup("".join(parts))
