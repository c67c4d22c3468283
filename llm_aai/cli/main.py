"""``llm-aai COMMAND ...``: the installed command, one word per ``python -m llm_aai.COMMAND``.

The modules stay the documented entry points (they work from a checkout without installing);
this only saves typing once the package is installed.
"""

from __future__ import annotations

import importlib
import sys

from llm_aai.cli.entry import run_command

COMMANDS = {
    "run": ("llm_aai.cli.run", "evaluate an agent on testbed tasks"),
    "analyze": ("llm_aai.cli.analyze", "pass rates per level against children and Olympics agents"),
    "replay": ("llm_aai.cli.replay", "animate or re-simulate a logged episode"),
    "play": ("llm_aai.cli.play", "play scripts in an arena under the paper's protocol"),
    "arenas": ("llm_aai.cli.arenas", "validate, list, show or fetch testbed arenas"),
    "view": ("llm_aai.cli.view", "browse runs and episodes in a static web site"),
    "audit": ("llm_aai.cli.audit", "the oracle over the testbed against what was passed in Unity"),
    "variants": ("llm_aai.cli.variants", "make validated procedural variants of testbed tasks"),
    "human": ("llm_aai.cli.human", "serve testbed levels to people in the browser"),
    "grounding": ("llm_aai.cli.grounding", "judge every Think claim of a run against the truth"),
}


def usage() -> str:
    """The command list, for --help and for an unknown command."""
    lines = ["usage: llm-aai COMMAND [ARGS...]", "", "commands:"]
    lines += [f"  {name:<9} {summary}" for name, (_, summary) in COMMANDS.items()]
    lines += ["", "llm-aai COMMAND --help describes a command's arguments."]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Hand the arguments after the command word to that command's own parser."""
    args = sys.argv[1:] if argv is None else list(argv)
    if not args or args[0] in ("-h", "--help"):
        print(usage())
        return 0 if args else 2
    command, rest = args[0], args[1:]
    if command not in COMMANDS:
        print(f"llm-aai: unknown command {command!r}\n\n{usage()}", file=sys.stderr)
        return 2
    module = importlib.import_module(COMMANDS[command][0])
    return run_command(lambda: module.main(rest))


if __name__ == "__main__":
    sys.exit(main())
