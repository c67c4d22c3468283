"""``python -m llm_aai.run``: see ``llm_aai.cli.run``."""

import sys

from llm_aai.cli.entry import run_command
from llm_aai.cli.run import main

if __name__ == "__main__":
    sys.exit(run_command(main))
