"""``python -m llm_aai.replay``: see ``llm_aai.cli.replay``."""

import sys

from llm_aai.cli.entry import run_command
from llm_aai.cli.replay import main

if __name__ == "__main__":
    sys.exit(run_command(main))
