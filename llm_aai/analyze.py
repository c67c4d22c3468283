"""``python -m llm_aai.analyze``: see ``llm_aai.cli.analyze``."""

import sys

from llm_aai.cli.analyze import main

if __name__ == "__main__":
    sys.exit(main())
