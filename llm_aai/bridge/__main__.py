"""``python -m llm_aai.bridge``: see ``llm_aai.cli.bridge``."""

import sys

from llm_aai.cli.bridge import main

sys.exit(main())
