"""``python -m llm_aai.play``: see ``llm_aai.cli.play``."""

import sys

from llm_aai.cli.entry import run_command
from llm_aai.cli.play import main

if __name__ == "__main__":
    sys.exit(run_command(main))
