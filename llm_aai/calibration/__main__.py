"""``python -m llm_aai.calibration``: see ``llm_aai.cli.contact_sheet``."""

import sys

from llm_aai.cli.contact_sheet import main
from llm_aai.cli.entry import run_command

if __name__ == "__main__":
    sys.exit(run_command(main))
