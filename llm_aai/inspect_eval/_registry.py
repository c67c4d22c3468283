"""What Inspect loads through the ``inspect_ai`` entry point: the ``llm_aai/testbed`` task."""

from llm_aai.inspect_eval import require_inspect

require_inspect()

from llm_aai.inspect_eval.task import testbed  # noqa: E402

__all__ = ["testbed"]
