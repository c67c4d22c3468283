"""The progress bar a run shows: episodes done, pass rate, infrastructure failures, tokens, cost.

Apart from the suite loop, so that what the user watches while a run plays is in one place.
"""

from __future__ import annotations

from tqdm import tqdm

from llm_aai.llm.cache import ResponseCache
from llm_aai.runner.suite import Progress


def open_bar(total: int, show_progress: bool) -> tqdm:
    """A bar counting ``total`` episodes, drawn only with ``show_progress``."""
    return tqdm(total=total, unit="episode", desc="episodes", disable=not show_progress,
                dynamic_ncols=True)


def update_bar(bar, progress: Progress, cost_known: bool = True,
               cache: ResponseCache | None = None) -> None:
    """Count one finished episode, with the run's pass rate, failures, tokens and cost so far."""
    rate = progress.passed / progress.done if progress.done else 0.0
    cost = f"${progress.cost_usd:.2f}" if cost_known else "$? (no price)"
    cached = f" cache {cache.hits} hit/{cache.misses} miss" if cache is not None else ""
    bar.set_postfix_str(  # before update(), which draws it: the shown rate is never a step late
        f"pass {rate:.0%} infra {progress.infra_failures} "
        f"tok {progress.tokens:,} {cost}{cached}", refresh=False)
    bar.update(1)
