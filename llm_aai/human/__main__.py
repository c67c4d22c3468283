"""``python -m llm_aai.human``: hands its arguments to ``llm_aai.cli.human``."""

import sys

from llm_aai.cli.entry import run_command
from llm_aai.cli.human import main

if __name__ == "__main__":
    sys.exit(run_command(main))
