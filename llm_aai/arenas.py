"""``python -m llm_aai.arenas``: see ``llm_aai.cli.arenas``."""

import sys

from llm_aai.cli.arenas import main

if __name__ == "__main__":
    sys.exit(main())
