"""The comparison figure: models' pass rates per level beside children and Olympics agents.

Modelled on Figures 3/4 of arXiv 2410.23242: per level, each model's proportion of trials passed
with a 95% Wilson interval, next to the interquartile range (bar) and the pooled proportion
(point) of each reference population; a last panel pools all the levels shown. Two styles:
``screen`` (a wide figure for notebooks and the viewer) and ``paper`` (print sizes: a journal's
single or double column, small type, 300 dpi), and an optional caption line with the runs'
settings. matplotlib is imported only here, and lazily, so the rest of the analysis works
without a display or a plotting stack.
"""

from __future__ import annotations

import io
import json
import re
import textwrap
import warnings
from dataclasses import dataclass, replace
from pathlib import Path

import pandas as pd

from llm_aai.analysis.levels import LEVEL_NAMES
from llm_aai.analysis.reference import POPULATIONS, reference_levels
from llm_aai.analysis.stats import wilson_interval
from llm_aai.logs.store import atomic_write_bytes

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
COLUMN_WIDTHS = {"single": 3.5, "double": 7.16}
"""Inches: one and two columns of a two-column journal page (IEEE: 3.5 and 7.16 in; Nature's
89 and 183 mm are within a millimetre)."""


@dataclass(frozen=True)
class FigureStyle:
    """How the figure is drawn for its medium.

    Attributes:
        size: ``(width, height)`` in inches when no ``--size`` is given.
        dpi: resolution of raster output.
        rc: matplotlib settings (type sizes, line widths).
        title: whether to draw the title (a paper's caption replaces it).
        level_names: whether ticks name the levels (only when there is room).

    """

    size: tuple[float, float]
    dpi: int
    rc: dict
    title: bool = True
    level_names: bool = True


STYLES = {
    "screen": FigureStyle((12.0, 5.0), 150, {"font.size": 10}),
    "paper": FigureStyle((COLUMN_WIDTHS["double"], 3.3), 300,
                         {"font.size": 7, "axes.linewidth": 0.6, "xtick.major.width": 0.6,
                          "ytick.major.width": 0.6, "lines.linewidth": 0.8,
                          "legend.fontsize": 6.5, "axes.labelsize": 7, "axes.titlesize": 8},
                         title=False),
}


def parse_size(text: str) -> tuple[float, float] | str:
    """``single``, ``double`` or ``WxH`` in inches (e.g. ``7x3``); errors say what is allowed."""
    if text in COLUMN_WIDTHS:
        return text
    match = re.fullmatch(r"(\d+(?:\.\d+)?)x(\d+(?:\.\d+)?)", text)
    if not match or not all(0.5 <= float(v) <= 40 for v in match.groups()):
        raise ValueError(f"size must be 'single', 'double' or WIDTHxHEIGHT in inches "
                         f"(0.5-40, e.g. 7x3), got {text!r}")
    return float(match[1]), float(match[2])


def _inches(size: tuple[float, float] | str | None, style: FigureStyle) -> tuple[float, float]:
    """A column name takes that width and a height in proportion to the style's."""
    if size is None:
        return style.size
    if isinstance(size, str):
        width = COLUMN_WIDTHS[parse_size(size) if size not in COLUMN_WIDTHS else size]
        ratio = style.size[1] / style.size[0]
        return width, max(2.6, width * ratio)
    return size


def plot_pass_rates(
    level_table: pd.DataFrame,
    reference: pd.DataFrame,
    path: str | Path,
    *,
    populations: tuple[str, ...] = ("children", "olympics_top10"),
    title: str = "Proportion of trials passed per level",
    style: str = "screen",
    size: tuple[float, float] | str | None = None,
    caption: str | None = None,
    overall: pd.DataFrame | None = None,
) -> Path:
    """Draw the comparison figure and save it; the format follows the file's extension.

    Args:
        level_table: ``pass_rates(episodes, by="level")``.
        reference: ``reference_populations()`` (or its level rows); with
            ``reference.played_reference``, a level played in part shows each population's
            rate over the tasks played, a point without an interquartile bar, named in the
            legend.
        path: where to save: ``.png``, ``.svg`` or ``.pdf``.
        populations: reference populations drawn beside the models, in order.
        title: the figure title (not drawn in the ``paper`` style).
        style: ``"screen"`` or ``"paper"`` (see ``STYLES``).
        size: ``"single"`` or ``"double"`` column, or ``(width, height)`` in inches;
            default: the style's.
        caption: a line under the legend, e.g. ``settings_caption(runs.runs)``.
        overall: ``model_summary(episodes)`` of the same labels: its interval over tasks
            (``boot_low``, ``boot_high``) is drawn in the all-levels panel. The level rows
            cannot give it (pooling levels' intervals is not resampling their tasks); without
            it that panel shows Wilson's interval only.

    Returns:
        The path written.

    Raises:
        ValueError: an unknown format, style, size or population, or no model with a result.

    Warns:
        UserWarning: for each model left out because none of its trials has a result (every
            episode lost to infrastructure), naming the model.

    """
    path = Path(path)
    if path.suffix.lower() not in FORMATS:
        raise ValueError(f"{path}: figure format must be one of {', '.join(FORMATS)}")
    if style not in STYLES:
        raise ValueError(f"style must be one of {', '.join(STYLES)}, got {style!r}")
    look = STYLES[style]
    inches = _inches(size, look)
    level_table = _with_results(level_table)
    plt = _pyplot()
    levels = sorted(int(level) for level in level_table["level"].unique())
    labels = list(pd.unique(level_table["label"]))
    ref = reference_levels(reference)
    missing = [p for p in populations if not (ref["population"] == p).any()]
    if missing:
        raise ValueError(f"no reference population {missing[0]!r}")
    look = _fitted(look, inches, len(levels))
    with plt.rc_context({**TEXT_AS_TEXT, **look.rc}):
        fig = _figure(plt, level_table, ref, labels, levels, populations,
                      title if look.title else None, inches, look, caption, overall)
        try:
            drawn = io.BytesIO()  # drawn whole first: a write cut short leaves the old file
            fig.savefig(drawn, format=path.suffix.lower()[1:], dpi=look.dpi)
        finally:
            plt.close(fig)
    atomic_write_bytes(path, drawn.getvalue())
    return path


def _fitted(look: FigureStyle, inches: tuple[float, float], levels: int) -> FigureStyle:
    """Level names on the ticks only when each level gets about an inch."""
    return replace(look, level_names=look.level_names and inches[0] / (levels + 1.5) >= 0.9)


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


def is_ceiling(label: str) -> bool:
    """Whether a run's label is the privileged oracle (``oracle``, ``oracle-frames``...).

    The oracle plans in the simulator with every object known: it is what the task allows,
    not a competitor, so the figure draws it as a ceiling over each level, not as a bar.
    """
    return label.split()[0].lower().startswith("oracle") if label.strip() else False


def _figure(plt, level_table, ref, labels, levels, populations, title, inches, look, caption,
            overall):
    ceilings = [label for label in labels if is_ceiling(label)]
    labels = [label for label in labels if not is_ceiling(label)]
    slots = max(len(labels) + len(populations), 1)
    width = 0.84 / slots
    x_of = {level: i for i, level in enumerate(levels)}
    fig, (ax, ax_all) = plt.subplots(
        1, 2, figsize=inches, layout="constrained", sharey=True,
        gridspec_kw={"width_ratios": [max(len(levels), 1), 1.25]})
    handles = []
    shown = _tasks_shown(level_table, levels)
    for k, label in enumerate(ceilings):
        rows = level_table[level_table["label"] == label]
        style = ("--", ":", "-.")[k % 3]
        short = _ceiling_short(rows, shown)
        handles.append(_draw_ceiling(ax, rows, label, x_of, style, shown, short))
        if not short:  # a ceiling over part of the tasks is no ceiling over all of them
            _draw_ceiling(ax_all, _pooled_model(rows), label, {0: 0}, style, shown, {})
    for i, label in enumerate(labels):
        rows = level_table[level_table["label"] == label]
        colour = MODEL_COLOURS[i % len(MODEL_COLOURS)]
        offset = _offset(i, slots, width)
        handles.append(_draw_model(ax, rows, label, x_of, offset, width, colour))
        _draw_model(ax_all, _pooled_model(rows, _row_of(overall, label)), label, {0: 0}, offset,
                    width, colour, band_id="tasks-band-all")
    for j, population in enumerate(populations):
        rows = ref[(ref["population"] == population) & ref["level"].isin(levels)]
        offset = _offset(len(labels) + j, slots, width)
        handles.append(_draw_population(ax, rows, population, x_of, offset, width))
        _draw_pooled_population(ax_all, rows, population, offset, width)
    _decorate(ax, levels, title, look.level_names)
    _decorate_all(ax_all, len(levels), titled=title is not None)
    _legend(fig, handles, caption)
    return fig


def _tasks_shown(level_table: pd.DataFrame, levels: list[int]) -> dict[int, int]:
    """Per level, the most tasks any label played there (what a ceiling should cover)."""
    most = level_table.groupby("level")["tasks"].max()
    return {level: int(most.get(level, 0)) for level in levels}


def _ceiling_short(rows: pd.DataFrame, shown: dict[int, int]) -> dict[int, tuple[int, int]]:
    """The levels where a ceiling's run played fewer tasks than shown: ``level -> (its, shown)``.

    An oracle run of one task of level 1 is no ceiling for level 1's other tasks, nor for the
    levels it never played.
    """
    played = {int(level): int(tasks) for level, tasks, n in
              zip(rows["level"], rows["tasks"], rows["n"], strict=True) if n > 0}
    return {level: (played.get(level, 0), most) for level, most in shown.items()
            if played.get(level, 0) < most}


def _draw_ceiling(ax, rows: pd.DataFrame, label: str, x_of, style: str,
                  shown: dict[int, int], short: dict[int, tuple[int, int]]):
    """A level's oracle pass rate as a line across the level's group of bars.

    Where the oracle played fewer of the level's tasks than shown (``short``, of ``shown``
    per level), the line says how many it covers; its legend entry says what it played.
    """
    rows = rows[rows["n"] > 0]
    line = None
    for level, p in zip(rows["level"], rows["proportion"], strict=True):
        x = x_of[int(level)]
        (line,) = ax.plot([x - 0.45, x + 0.45], [p, p], linestyle=style, color="black",
                          linewidth=1.6, zorder=4)
        if int(level) in short:
            ax.annotate(f"{label}: {short[int(level)][0]} of {short[int(level)][1]} tasks",
                        (x + 0.45, p), xytext=(0, 2), textcoords="offset points",
                        ha="right", va="bottom", fontsize="x-small", zorder=5)
    text = f"{label}: ceiling (privileged search in the simulator)"
    if short:
        played = int(rows["tasks"].sum())
        text += (f"; it played {played} of the {sum(shown.values())} tasks shown (fewer on "
                 f"level{'s' if len(short) > 1 else ''} {', '.join(map(str, short))}): "
                 "drawn only where it played, not in the all-levels panel")
    return line, text


def _row_of(overall: pd.DataFrame | None, label: str) -> pd.Series | None:
    """The label's ``model_summary`` row, if given; a missing one is an error."""
    if overall is None:
        return None
    found = overall[overall["label"] == label]
    if found.empty:
        raise ValueError(f"overall has no row for model {label!r}: pass model_summary of the "
                         "episodes the level table was made from")
    return found.iloc[0]


def _pooled_model(rows: pd.DataFrame, overall: pd.Series | None = None) -> pd.DataFrame:
    """One row at "level 0": the model's trials over every level, with its Wilson interval.

    With the model's ``model_summary`` row, also its cluster-bootstrap interval over tasks.
    """
    k, n = int(rows["k"].sum()), int(rows["n"].sum())
    low, high = wilson_interval(k, n)
    pooled = {"level": 0, "k": k, "n": n, "proportion": k / n if n else 0.0,
              "ci_low": low, "ci_high": high}
    if overall is not None:
        if (int(overall["k"]), int(overall["n"])) != (k, n):
            raise ValueError(f"overall's {overall['label']!r} has {overall['k']}/{overall['n']} "
                             f"passed, the level table {k}/{n}: not the same episodes")
        pooled.update(boot_low=overall["boot_low"], boot_high=overall["boot_high"])
    return pd.DataFrame([pooled])


def _draw_pooled_population(ax, rows: pd.DataFrame, population: str, offset, width) -> None:
    """Draw the population's proportion pooled over the levels shown, as a point only.

    The packaged data holds quartiles per level, not of each individual's rate over several
    levels, so there is no interquartile range to draw here.
    """
    _, point, marker, _ = POPULATION_STYLE.get(population, ("#dddddd", "#444444", "o", None))
    k, n = int(rows["k"].sum()), int(rows["n"].sum())
    if n:
        ax.scatter([offset], [k / n], marker=marker, s=28, color=point, edgecolor="white",
                   linewidth=0.6, zorder=4)


def _decorate_all(ax, levels: int, *, titled: bool) -> None:
    """The pooled axes: its tick names it ("all 10 levels"); a title only beside the figure's.

    The axes is a fifth of an inch wide in a single column, where no title fits; the paper
    style draws no titles anyway, so its heading would be the only one.
    """
    ax.set_xticks([0])
    ax.set_xticklabels([f"all\n{levels} level{'s' if levels != 1 else ''}"])
    ax.set_xlim(-0.5, 0.5)
    ax.grid(axis="y", color="#e4e4e4", zorder=0)
    ax.set_axisbelow(True)
    ax.tick_params(axis="y", left=False)
    for spine in ("top", "right", "left"):
        ax.spines[spine].set_visible(False)
    if titled:
        ax.set_title("All levels", loc="center", fontsize="medium")


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


def _draw_model(ax, rows: pd.DataFrame, label: str, x_of, offset, width, colour,
                band_id: str = "tasks-band") -> None:
    rows = rows[rows["n"] > 0]
    x = [x_of[int(level)] + offset for level in rows["level"]]
    p = rows["proportion"].to_numpy()
    error = [p - rows["ci_low"].to_numpy(), rows["ci_high"].to_numpy() - p]
    trials = sorted(set(rows["n"]))
    n_text = f"n={trials[0]}" if len(trials) == 1 else f"n={trials[0]}-{trials[-1]}"
    # The edge keeps a 0% bar visible as a coloured line on the axis.
    bars = ax.bar(x, p, width * 0.92, color=colour, edgecolor=colour, linewidth=1.5, zorder=2)
    tasks = ""
    if "boot_low" in rows and rows["boot_low"].notna().any():
        # the interval over tasks: a broad translucent band behind the Wilson whiskers
        boot = rows[rows["boot_low"].notna()]
        bx = [x_of[int(level)] + offset for level in boot["level"]]
        bp = boot["proportion"].to_numpy()
        ax.errorbar(bx, bp, yerr=[bp - boot["boot_low"].to_numpy(),
                                  boot["boot_high"].to_numpy() - bp],
                    fmt="none", ecolor="#555555", alpha=0.35, elinewidth=width * 40,
                    capsize=0, zorder=2.5, gid=band_id)
        tasks = ", 95% cluster bootstrap over tasks (grey band)"
    ax.errorbar(x, p, yerr=error, fmt="none", ecolor="black", elinewidth=1, capsize=2.5,
                zorder=3)
    return bars, (f"{label}: pass rate (bar), 95% Wilson confidence interval (whiskers)"
                  f"{tasks}; {n_text} per level")


def _draw_population(ax, rows: pd.DataFrame, population: str, x_of, offset, width) -> None:
    face, point, marker, hatch = POPULATION_STYLE.get(population,
                                                      ("#dddddd", "#444444", "o", None))
    name = POPULATIONS.get(population, population)
    x = [x_of[int(level)] + offset for level in rows["level"]]
    # a level played in part: the rate over its tasks played, which have no quartiles
    whole = rows["q1"].notna().to_numpy()
    q1, q3 = rows["q1"].to_numpy()[whole], rows["q3"].to_numpy()[whole]
    height = [max(high - low, MIN_IQR_HEIGHT) for low, high in zip(q1, q3, strict=True)]
    bars = ax.bar([v for v, w in zip(x, whole, strict=True) if w], height, width * 0.92,
                  bottom=q1, color=face, edgecolor=point, linewidth=0.8, hatch=hatch, zorder=2)
    points = ax.scatter(x, rows["proportion"], marker=marker, s=28, color=point,
                        edgecolor="white", linewidth=0.6, zorder=4)
    partly = [str(int(level)) for level, w in zip(rows["level"], whole, strict=True) if not w]
    return (bars, points), (f"{name}: interquartile range (bar), pooled rate (point)"
                            + (f"; level{'s' if len(partly) > 1 else ''} {', '.join(partly)}: "
                               "rate over the tasks played only (played in part), no IQR"
                               if partly else ""))


def _decorate(ax, levels: list[int], title: str | None, level_names: bool) -> None:
    ax.set_xticks(range(len(levels)))
    ax.set_xticklabels([_tick(level) if level_names else str(level) for level in levels],
                       fontsize="small")
    ax.set_xlim(-0.5, len(levels) - 0.5)
    ax.set_ylim(-0.015, 1.03)
    ax.set_yticks([0, 0.25, 0.5, 0.75, 1.0])
    # in a narrow figure the legend below leaves the axes short: the label on two lines fits
    ax.set_ylabel("Proportion of trials passed" if level_names else
                  "Proportion of\ntrials passed")
    ax.set_xlabel("Level")
    ax.grid(axis="y", color="#e4e4e4", zorder=0)
    ax.set_axisbelow(True)
    for spine in ("top", "right"):
        ax.spines[spine].set_visible(False)
    for boundary in range(1, len(levels)):
        ax.axvline(boundary - 0.5, color="#eeeeee", linewidth=0.8, zorder=0)
    if title:
        ax.set_title(title, fontsize="large", loc="left")


def _legend(fig, handles, caption: str | None) -> None:
    """One legend below the axes, so the levels get the full width; the caption above."""
    import matplotlib
    from matplotlib.legend_handler import HandlerTuple

    columns = 2 if fig.get_figwidth() >= 10 else 1
    # Wrap entries to the figure: a character of "small" type is about 0.55 of its size wide.
    small = 0.833 * matplotlib.rcParams["font.size"]
    chars = int(fig.get_figwidth() * 72 / columns / (0.55 * small)) - 10
    artists = [artist for artist, _ in handles]
    texts = ["\n".join(textwrap.wrap(text, max(30, chars))) for _, text in handles]
    fig.legend(artists, texts, loc="outside lower center", ncol=columns, fontsize="small",
               frameon=False,
               handler_map={tuple: HandlerTuple(ndivide=None, pad=0.4)})
    if caption:  # on top: constrained layout keeps a suptitle clear of the legend below
        width = max(40, int(fig.get_figwidth() * 17))
        fig.suptitle("\n".join(textwrap.wrap(caption, width)), fontsize="x-small",
                     color="#555555", x=0.01, ha="left")


def settings_caption(runs: pd.DataFrame) -> str:
    """One line with each run's settings that change results, for under the figure.

    Args:
        runs: ``Runs.runs`` (its ``settings`` column, as ``load_runs`` reads the manifests).

    """
    parts = []
    for row in runs.itertuples(index=False):
        settings = json.loads(row.settings)
        shown = [settings.get("model id") or row.model, f"prompt {row.prompt}"]
        if settings.get("prompt sha256"):
            shown.append(f"sha256 {str(settings['prompt sha256'])[:8]}")
        for key, unit in (("backend", ""), ("resolution", " px"), ("script_mode", " scripts"),
                          ("protocol.max_scripts", " scripts max"), ("temperature", "")):
            value = settings.get(key)
            if value is not None:
                shown.append(f"temperature {value}" if key == "temperature" else f"{value}{unit}")
        parts.append(f"{row.run_id}: " + ", ".join(str(v) for v in shown))
    return ("Runs: " + "; ".join(parts) + ". Model intervals: Wilson 95% (whiskers), cluster "
            "bootstrap 95% over tasks (grey band); populations: IQR.")


def _tick(level: int) -> str:
    """Build a multi-line tick label: the number, then the wrapped name."""
    return f"{level}\n" + "\n".join(textwrap.wrap(LEVEL_NAMES[level], 14))
