"""``python -m llm_aai.analyze``: see ``llm_aai.cli.analyze``."""

import sys

from llm_aai.cli.analyze import main
from llm_aai.cli.entry import run_command

if __name__ == "__main__":
    sys.exit(run_command(main))
