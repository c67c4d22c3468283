import signal

from llm_aai.cli.audit import main
from llm_aai.cli.entry import run_command

code = run_command(main)
# The audit is finished (or has said how to resume): the interpreter's exit only joins the
# worker pool's threads, and a Ctrl-C landing there would end it by the signal, without a word.
signal.signal(signal.SIGINT, signal.SIG_IGN)
raise SystemExit(code)
