"""The comparison figure: models' pass rates per level beside children and Olympics agents.

Modelled on Figures 3/4 of arXiv 2410.23242: per level, each model's proportion of trials passed
with a 95% Wilson interval, next to the interquartile range (bar) and the pooled proportion
(point) of each reference population. matplotlib is imported only here, and lazily, so the
rest of the analysis works without a display or a plotting stack.
"""

from __future__ import annotations

import textwrap
import warnings
from pathlib import Path

import pandas as pd

from llm_aai.analysis.levels import LEVEL_NAMES
from llm_aai.analysis.reference import POPULATIONS, reference_levels

FORMATS = (".png", ".svg", ".pdf")
MODEL_COLOURS = ("#3b6fb6", "#e07b39", "#4e9a5b", "#b9473f", "#7d5ba6", "#8c6d46", "#c05aa0",
                 "#5f6b73")
POPULATION_STYLE = {  # face colour of the IQR bar, colour of the pooled point, marker, hatch
    "children": ("#f2d08a", "#a86b00", "D", None),
    "children_all": ("#f5e1b3", "#7a5a10", "d", "////"),
    "olympics_top10": ("#c9c9c9", "#333333", "s", None),
}
TEXT_AS_TEXT = {"svg.fonttype": "none", "pdf.fonttype": 42}  # editable text in vector output
MIN_IQR_HEIGHT = 0.012  # so a zero-width interquartile range (Q1 == Q3) stays visible


def plot_pass_rates(
    level_table: pd.DataFrame,
    reference: pd.DataFrame,
    path: str | Path,
    *,
    populations: tuple[str, ...] = ("children", "olympics_top10"),
    title: str = "Proportion of trials passed per level",
) -> Path:
    """Draw the comparison figure and save it; the format follows the file's extension.

    Args:
        level_table: ``pass_rates(episodes, by="level")``.
        reference: ``reference_populations()`` (or its level rows).
        path: where to save: ``.png``, ``.svg`` or ``.pdf``.
        populations: reference populations drawn beside the models, in order.
        title: the figure title.

    Returns:
        The path written.

    Raises:
        ValueError: an unknown format or population, or no model with a result to draw.

    Warns:
        UserWarning: for each model left out because none of its trials has a result (every
            episode lost to infrastructure), naming the model.

    """
    path = Path(path)
    if path.suffix.lower() not in FORMATS:
        raise ValueError(f"{path}: figure format must be one of {', '.join(FORMATS)}")
    level_table = _with_results(level_table)
    plt = _pyplot()
    levels = sorted(int(level) for level in level_table["level"].unique())
    labels = list(pd.unique(level_table["label"]))
    ref = reference_levels(reference)
    missing = [p for p in populations if not (ref["population"] == p).any()]
    if missing:
        raise ValueError(f"no reference population {missing[0]!r}")
    with plt.rc_context(TEXT_AS_TEXT):
        fig = _figure(plt, level_table, ref, labels, levels, populations, title)
        try:
            fig.savefig(path, dpi=150)
        finally:
            plt.close(fig)
    return path


class LeftOutOfFigure(UserWarning):
    """A model with no result to draw was left out of the figure."""


def _with_results(level_table: pd.DataFrame) -> pd.DataFrame:
    """Keep the models with at least one trial that has a result; warn about the others.

    A model whose every episode was lost to infrastructure (its provider was down) has no
    proportion to draw at any level; dropping it keeps the figure of the others, and the
    warning keeps the omission from going unnoticed.
    """
    counted = level_table.groupby("label", sort=False)["n"].sum()
    for label in counted.index[counted == 0]:
        lost = level_table.loc[level_table["label"] == label, "infra_failures"].sum()
        warnings.warn(f"model {label!r} left out of the figure: none of its trials has a result "
                      f"({lost} episode(s) lost to infrastructure)", LeftOutOfFigure,
                      stacklevel=3)
    if not (counted > 0).any():
        raise ValueError("no model has a trial with a result to plot (every episode was lost "
                         "to infrastructure, or there are none)")
    return level_table[level_table["label"].isin(counted.index[counted > 0])]


def _figure(plt, level_table, ref, labels, levels, populations, title):
    slots = len(labels) + len(populations)
    width = 0.84 / slots
    x_of = {level: i for i, level in enumerate(levels)}
    fig, ax = plt.subplots(figsize=(12, 5), layout="constrained")
    handles = []
    for i, label in enumerate(labels):
        handles.append(_draw_model(ax, level_table[level_table["label"] == label], label, x_of,
                                   _offset(i, slots, width), width,
                                   MODEL_COLOURS[i % len(MODEL_COLOURS)]))
    for j, population in enumerate(populations):
        rows = ref[(ref["population"] == population) & ref["level"].isin(levels)]
        handles.append(_draw_population(ax, rows, population, x_of,
                                        _offset(len(labels) + j, slots, width), width))
    _decorate(ax, levels, title)
    _legend(fig, handles)
    return fig


def _pyplot():
    """Import pyplot on the non-interactive backend, with an actionable error if missing."""
    try:
        import matplotlib
    except ImportError as error:  # pragma: no cover - matplotlib is a declared dependency
        raise ImportError("plotting needs matplotlib: pip install matplotlib") from error
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _offset(slot: int, slots: int, width: float) -> float:
    return (slot - (slots - 1) / 2) * width


def _draw_model(ax, rows: pd.DataFrame, label: str, x_of, offset, width, colour) -> None:
    rows = rows[rows["n"] > 0]
    x = [x_of[int(level)] + offset for level in rows["level"]]
    p = rows["proportion"].to_numpy()
    error = [p - rows["ci_low"].to_numpy(), rows["ci_high"].to_numpy() - p]
    trials = sorted(set(rows["n"]))
    n_text = f"n={trials[0]}" if len(trials) == 1 else f"n={trials[0]}-{trials[-1]}"
    # The edge keeps a 0% bar visible as a coloured line on the axis.
    bars = ax.bar(x, p, width * 0.92, color=colour, edgecolor=colour, linewidth=1.5, zorder=2)
    ax.errorbar(x, p, yerr=error, fmt="none", ecolor="black", elinewidth=1, capsize=2.5,
                zorder=3)
    return bars, f"{label} ({n_text} trials per level; 95% Wilson CI)"


def _draw_population(ax, rows: pd.DataFrame, population: str, x_of, offset, width) -> None:
    face, point, marker, hatch = POPULATION_STYLE.get(population,
                                                      ("#dddddd", "#444444", "o", None))
    name = POPULATIONS.get(population, population)
    x = [x_of[int(level)] + offset for level in rows["level"]]
    q1, q3 = rows["q1"].to_numpy(), rows["q3"].to_numpy()
    height = [max(high - low, MIN_IQR_HEIGHT) for low, high in zip(q1, q3, strict=True)]
    bars = ax.bar(x, height, width * 0.92, bottom=q1, color=face, edgecolor=point,
                  linewidth=0.8, hatch=hatch, zorder=2)
    points = ax.scatter(x, rows["proportion"], marker=marker, s=28, color=point,
                        edgecolor="white", linewidth=0.6, zorder=4)
    return (bars, points), f"{name}: interquartile range (bar), overall proportion (point)"


def _decorate(ax, levels: list[int], title: str) -> None:
    ax.set_xticks(range(len(levels)))
    ax.set_xticklabels([_tick(level) for level in levels], fontsize=8.5)
    ax.set_xlim(-0.5, len(levels) - 0.5)
    ax.set_ylim(-0.015, 1.03)
    ax.set_yticks([0, 0.25, 0.5, 0.75, 1.0])
    ax.set_ylabel("Proportion of trials passed")
    ax.set_xlabel("Level")
    ax.grid(axis="y", color="#e4e4e4", zorder=0)
    ax.set_axisbelow(True)
    for spine in ("top", "right"):
        ax.spines[spine].set_visible(False)
    for boundary in range(1, len(levels)):
        ax.axvline(boundary - 0.5, color="#eeeeee", linewidth=0.8, zorder=0)
    ax.set_title(title, fontsize=12, loc="left")


def _legend(fig, handles) -> None:
    """One legend below the axes, so the levels get the full width of the figure."""
    from matplotlib.legend_handler import HandlerTuple

    artists = [artist for artist, _ in handles]
    texts = [text for _, text in handles]
    fig.legend(artists, texts, loc="outside lower center", ncol=2, fontsize=8.5,
               frameon=False, handler_map={tuple: HandlerTuple(ndivide=None, pad=0.4)})


def _tick(level: int) -> str:
    """Build a multi-line tick label: the number, then the wrapped name."""
    return f"{level}\n" + "\n".join(textwrap.wrap(LEVEL_NAMES[level], 14))
