"""``python -m llm_aai.bridge``: see ``llm_aai.cli.bridge``.

The bridge's protocol needs protobuf (and grpcio to serve), the ``bridge`` extra, which
``make demo``'s environment does not hold: a missing one is a line naming the set-up step
that installs it, not a traceback ending in ``No module named 'google'``.
"""

import sys

BRIDGE_MODULES = {"google", "grpc"}

try:
    from llm_aai.cli.bridge import main
except ModuleNotFoundError as error:
    if (error.name or "").partition(".")[0] not in BRIDGE_MODULES:
        raise
    sys.exit(f"error: the bridge needs grpcio and protobuf ({error}): run `make animalai` "
             "(the animalai client with them), or pip install 'llm-aai[bridge]'")

sys.exit(main())
