"""Build the static site: runs, episodes, one page per episode and one per task.

The site is plain files with relative links (it works from disk, from a zip or behind any web
server): HTML rendered with Jinja2 (autoescaped, since replies are untrusted model text), one
CSS and one JS file, the comparison figure as SVG and every frame the agents were sent, copied
beside the pages and linked, never inlined. ``SiteBuilder`` remembers what it rendered, so a
rebuild while a run is going (``--serve``) only renders the episodes that are new or changed.
"""

from __future__ import annotations

import re
import time
import warnings
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

import pandas as pd
from jinja2 import Environment, PackageLoader, StrictUndefined

from llm_aai.analysis import (
    load_runs,
    model_summary,
    pass_rates,
    pooling_conflicts,
    repeated_seeds,
)
from llm_aai.analysis.notes import attempt_notes, reference_notes
from llm_aai.analysis.plots import LeftOutOfFigure, plot_pass_rates, settings_caption
from llm_aai.analysis.reference import POPULATIONS, compared_reference
from llm_aai.analysis.report import level_report
from llm_aai.grounding.ground import GROUNDING_CSV
from llm_aai.logs.frame_files import FrameOutside, frame_file
from llm_aai.logs.store import RESULT, TURNS
from llm_aai.replay.episode import load_episode
from llm_aai.view.episode import EpisodeView, episode_view
from llm_aai.view.files import SiteFiles
from llm_aai.view.legend import LEGEND, cell_title
from llm_aai.view.runs import RunSummary, run_summary
from llm_aai.view.svg import PATH_COLOURS, arena_map, health_curve
from llm_aai.view.tasks import TaskView, task_views

ASSETS = ("site.css", "site.js")
POPULATIONS_SHOWN = ("children", "olympics_top10")
FIGURE = "assets/pass-rates.svg"
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+|\.\.+")


@dataclass
class BuildReport:
    """What a build wrote and what it could not show.

    Attributes:
        out: the site's directory.
        episodes: episodes on the site.
        rendered: episode pages rendered by this build (the others were unchanged).
        seconds: how long the build took.
        problems: things the pages show as missing (a frame file, the figure, arenas under
            the maps), one line each.
        without_map: episodes whose map shows the path without the arena.

    """

    out: Path
    episodes: int = 0
    rendered: int = 0
    seconds: float = 0.0
    problems: list[str] = field(default_factory=list)
    without_map: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class EpisodeEntry:
    """An episode's row on the episodes and task pages, with where its page is."""

    row: dict
    href: str
    view: EpisodeView


class SiteBuilder:
    """Renders run directories into a site directory, again and again as the runs grow.

    Args:
        run_dirs: the run directories to show.
        out: the site's directory (created; files it did not write are left alone). Every
            file is written through ``SiteFiles``: one that would land outside it (through a
            symlink already there) is refused with ``SiteWriteError``.
        arenas_dir: where to look for arena files for the maps (default: the run's own, then
            ``$LLM_AAI_ARENAS`` or the testbed cache).

    """

    def __init__(self, run_dirs: list[Path], out: Path, arenas_dir: Path | None = None):
        self.run_dirs = [Path(d) for d in run_dirs]
        self.out = Path(out)
        self.arenas_dir = arenas_dir
        self._env = Environment(loader=PackageLoader("llm_aai.view", "templates"),
                                autoescape=True, undefined=StrictUndefined,
                                trim_blocks=True, lstrip_blocks=True)
        self._env.filters["component"] = _safe
        self._seen: dict[str, tuple] = {}  # episode page -> signature of its log when rendered
        self._views: dict[str, EpisodeView] = {}
        self._run_keys: dict[str, str] = {}  # run id -> its folder name in the site

    def build(self) -> BuildReport:
        """Render every page; episode pages only when their log changed since the last build.

        Raises:
            RunDirectoryError: a path is not a run directory or holds a malformed result.
            ReplayInputError: an episode's turn log is malformed (file and line named).

        """
        started = time.perf_counter()
        report = BuildReport(self.out)
        runs = load_runs(self.run_dirs, with_turns=False)
        self._files = SiteFiles(self.out)
        self._copy_assets()
        entries = [self._episode(row, report) for row in _rows(runs.episodes)]
        report.episodes = len(entries)
        report.without_map = [e.row["episode_id"] for e in entries if e.view.layout is None]
        if report.without_map:
            first = next(e.view for e in entries if e.view.layout is None)
            report.problems.append(f"{len(report.without_map)} episode(s) drawn without their "
                                   f"arena, e.g. {first.logged.episode_id}: "
                                   f"{first.layout_note}")
        tasks = task_views(entries)
        self._runs_page(runs, tasks, report)
        self._write("episodes.html", "episodes.html", root="", entries=entries,
                    columns=_filters(entries))
        for task in tasks:
            self._task_page(task)
        report.seconds = time.perf_counter() - started
        return report

    def _episode(self, row: dict, report: BuildReport) -> EpisodeEntry:
        directory = Path(row["episode_dir"])
        run_key = self._run_key(str(row["run_id"]))
        page = f"episode/{run_key}/{_safe(directory.name)}.html"
        signature = _signature(directory)
        view = self._views.get(page)
        if view is None or self._seen.get(page) != signature:
            view = episode_view(load_episode(directory, finished_without_replies=True),
                                self.arenas_dir)
            data = f"data/{run_key}/{_safe(directory.name)}"
            report.problems.extend(self._copy_frames(view, directory, data))
            self._episode_page(page, row, view, data)
            self._views[page], self._seen[page] = view, signature
            report.rendered += 1
        return EpisodeEntry(row, page, view)

    def _run_key(self, run_id: str) -> str:
        """A folder name for the run, distinct from other runs' even when ids clean alike."""
        if run_id not in self._run_keys:
            key, taken, n = _safe(run_id), set(self._run_keys.values()), 1
            while key in taken:
                n += 1
                key = f"{_safe(run_id)}-{n}"
            self._run_keys[run_id] = key
        return self._run_keys[run_id]

    def _episode_page(self, page: str, row: dict, view: EpisodeView, data: str) -> None:
        root = "../../"
        task = f"{root}task/{_safe(row['task_id'])}.html"
        self._write(page, "episode.html", root=root, row=row, view=view, data=f"{root}{data}",
                    task_href=task,
                    map_svg=arena_map(view.layout, [view.path],
                                      title=f"Top-down map of {row['episode_id']}"),
                    health_svg=health_curve(view.health))

    def _task_page(self, task: TaskView) -> None:
        root = "../"
        self._write(f"task/{_safe(task.task_id)}.html", "task.html", root=root, task=task,
                    colours=PATH_COLOURS,
                    overlay=arena_map(task.layout, task.paths(root), numbered=False,
                                      title=f"Paths of every episode of {task.task_id}"),
                    small_map=lambda view, i: arena_map(view.layout, [view.path], numbered=False,
                                                        title=view.logged.episode_id,
                                                        first_colour=i))

    def _runs_page(self, runs, tasks: list[TaskView], report: BuildReport) -> None:
        reference = compared_reference(runs.episodes)
        episodes = runs.episodes
        levels = pass_rates(episodes, by="level")
        overall = model_summary(episodes)
        table = level_report(levels, overall, reference, POPULATIONS_SHOWN)
        figure = self._figure(levels, reference, settings_caption(runs.runs), report)
        summaries: list[RunSummary] = [run_summary(run, episodes, runs.attempts)
                                       for _, run in runs.runs.iterrows()]
        self._write("index.html", "runs.html", root="", runs=summaries, table=table,
                    figure=figure, tasks=tasks, legend=LEGEND, cell_title=cell_title,
                    notes=[*pooling_conflicts(runs.runs), *repeated_seeds(episodes),
                           *(line.removeprefix("note: ") for line in
                             [*reference_notes(runs), *attempt_notes(runs)])])

    def _figure(self, levels: pd.DataFrame, reference: pd.DataFrame, caption: str,
                report: BuildReport) -> str | None:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                plot_pass_rates(levels, reference, self._files.path(FIGURE),
                                populations=POPULATIONS_SHOWN, caption=caption)
            except ValueError as error:
                report.problems.append(f"no figure: {error}")
                return None
        for warning in caught:  # the figure's own become problems; others are shown as raised
            if issubclass(warning.category, LeftOutOfFigure):
                report.problems.append(str(warning.message))
            else:  # e.g. a ResourceWarning of an object the collector freed meanwhile
                warnings.showwarning(warning.message, warning.category, warning.filename,
                                     warning.lineno)
        return FIGURE

    def _copy_assets(self) -> None:
        static = resources.files("llm_aai.view").joinpath("static")
        for name in ASSETS:
            self._files.write_bytes(f"assets/{name}", static.joinpath(name).read_bytes())

    def _copy_frames(self, view: EpisodeView, source: Path, target: str) -> list[str]:
        """Copy the frames the episode sent to ``target`` (a folder of the site).

        A frame is copied only from a plain relative path (no ``..``, not absolute) that
        resolves to a file inside both the episode's folder and its run's; any other becomes
        a problem line, so a shared run cannot have the site read or write elsewhere.
        """
        problems = []
        run = source.parent.parent.resolve()
        for turn in view.turns:
            for relative in turn.images:
                where = f"{source / TURNS}: turn {turn.number}: image {relative!r}"
                try:  # a plain path inside the episode folder, symlinks followed (logs' rule)
                    origin = frame_file(source, relative).resolve()
                except FrameOutside as error:
                    problems.append(f"{where}: {error}; not copied")
                    continue
                if not origin.is_relative_to(run):
                    problems.append(f"{where} lies outside the run directory; not copied")
                elif not origin.is_file():
                    problems.append(f"{where} is missing")
                else:
                    self._files.copy(origin, f"{target}/{relative}")
        return problems

    def _write(self, page: str, template: str, **context) -> None:
        html = self._env.get_template(template).render(populations=POPULATIONS,
                                                       page=page, **context)
        self._files.write_text(page, html)


def build_site(run_dirs: list[Path], out: Path, arenas_dir: Path | None = None) -> BuildReport:
    """Build the site once (see ``SiteBuilder``)."""
    return SiteBuilder(run_dirs, out, arenas_dir).build()


def _rows(episodes: pd.DataFrame) -> list[dict]:
    ordered = episodes.sort_values(["level", "task_id", "label", "run_id", "trial"],
                                   kind="stable")
    return ordered.to_dict("records")


def _filters(entries: list[EpisodeEntry]) -> dict[str, list[str]]:
    """The values each filter of the episodes page offers, from the episodes present."""
    def values(key):
        return sorted({str(entry.row[key]) for entry in entries},
                      key=lambda v: (len(v), v) if key in ("level", "trial") else v)
    return {key: values(key) for key in ("level", "task_id", "label", "trial", "end_reason")}


def _signature(directory: Path) -> tuple:
    """Changes when the episode's log or result does, or the run's claims appear or change.

    Size and mtime of ``turns.jsonl``, ``result.json`` and the run's ``grounding.csv``.
    """
    stats = [(directory / name).stat() for name in (TURNS, RESULT)]
    claims = directory.parent.parent / GROUNDING_CSV
    extra = ((claims.stat().st_size, claims.stat().st_mtime_ns),) if claims.is_file() else ()
    return tuple((s.st_size, s.st_mtime_ns) for s in stats) + extra


def _safe(name: str) -> str:
    """A path component made only of safe characters (run ids come from manifests)."""
    cleaned = _UNSAFE.sub("_", str(name)).strip("._")
    return cleaned or "_"
