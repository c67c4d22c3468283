"""``python -m llm_aai.grounding``: see ``llm_aai.cli.grounding``."""

import sys

from llm_aai.cli.entry import run_command
from llm_aai.cli.grounding import main

if __name__ == "__main__":
    sys.exit(run_command(main))
