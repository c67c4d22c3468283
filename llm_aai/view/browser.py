"""Where the system's Chromium is and how to start it headless, for the viewer's checks.

The tests and the benchmark open the site in a real browser through Playwright, with the
system's Chromium (Playwright's own browser download is not always possible). These flags
start it headless on a machine with no display, no GPU and no network.
"""

from __future__ import annotations

import os
import shutil

CHROMIUM_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                  "--no-first-run", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync")
CHROMIUM_ENV = "LLM_AAI_CHROMIUM"
CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def find_chromium() -> str | None:
    """``$LLM_AAI_CHROMIUM`` if set, else the first Chromium or Chrome on PATH, else None."""
    named = os.environ.get(CHROMIUM_ENV)
    if named:
        return named
    return next((found for name in CHROMIUM_NAMES if (found := shutil.which(name))), None)
