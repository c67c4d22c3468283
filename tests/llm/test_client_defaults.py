"""A model client built by hand behaves as one a run builds: the same defaults."""

from __future__ import annotations

from llm_aai.cli.run import build_parser
from llm_aai.llm.client import LiteLLMClient
from llm_aai.llm.retry import RetryPolicy


def test_the_client_retries_as_often_as_the_run_command_documents():
    """The client retried 3 times by default while ``--max-retries`` said (and did) 6."""
    parser = build_parser()
    client = LiteLLMClient("openai/fake", api_key="k")
    assert parser.get_default("model_options.max_retries") == 6
    assert client.retry_policy.max_attempts == 6 + 1
    assert RetryPolicy().max_attempts == 6 + 1
    for attribute in ("temperature", "max_tokens", "timeout_s"):  # a flag's dest is its field
        assert getattr(client, attribute) == parser.get_default(f"model_options.{attribute}")
