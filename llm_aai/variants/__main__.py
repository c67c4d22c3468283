from llm_aai.cli.entry import run_command
from llm_aai.cli.variants import main

if __name__ == "__main__":  # a spawned worker imports this module too: it must not run main
    raise SystemExit(run_command(main))
