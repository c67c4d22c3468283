"""A model client built by hand behaves as one a run builds: the same defaults."""

from __future__ import annotations

from llm_aai.cli.run import build_parser
from llm_aai.llm.client import LiteLLMClient
from llm_aai.llm.retry import RetryPolicy


def test_the_client_retries_as_often_as_the_run_command_documents():
    """The client retried 3 times by default while ``--max-retries`` said (and did) 6."""
    parser = build_parser()
    client = LiteLLMClient("openai/fake", api_key="k")
    assert parser.get_default("max_retries") == 6
    assert client.retry_policy.max_attempts == 6 + 1
    assert RetryPolicy().max_attempts == 6 + 1
    for flag, attribute in (("temperature", "temperature"), ("max_tokens", "max_tokens"),
                            ("timeout", "timeout_s")):
        assert getattr(client, attribute) == parser.get_default(flag), flag
