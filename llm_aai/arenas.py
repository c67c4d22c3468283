"""``python -m llm_aai.arenas``: see ``llm_aai.cli.arenas``."""

import sys

from llm_aai.cli.arenas import main
from llm_aai.cli.entry import run_command

if __name__ == "__main__":
    sys.exit(run_command(main))
