"""``python -m llm_aai.view``: see ``llm_aai.cli.view``."""

import sys

from llm_aai.cli.entry import run_command
from llm_aai.cli.view import main

if __name__ == "__main__":
    sys.exit(run_command(main))
