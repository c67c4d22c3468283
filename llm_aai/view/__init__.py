"""Browse runs in a static web site: runs, episodes, each episode turn by turn, each task.

``build_site`` renders run directories into plain HTML, CSS, a little JavaScript, SVG maps and
the frames the agents saw (``python -m llm_aai.view RUN_DIR... --out SITE``); ``serve`` serves
the site on 127.0.0.1 and rebuilds it while a run adds episodes. The command line is
``llm_aai.cli.view``.
"""

from llm_aai.view.serve import serve
from llm_aai.view.site import BuildReport, SiteBuilder, build_site

__all__ = ["BuildReport", "SiteBuilder", "build_site", "serve"]
