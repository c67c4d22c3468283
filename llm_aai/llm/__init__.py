"""Model access: one litellm client for every provider, one retry policy, one response type.

``fake_server`` is a real HTTP server speaking the OpenAI and Anthropic chat dialects, for
offline tests and benchmarks.
"""

from llm_aai.llm.aliases import (
    MODEL_ALIASES,
    ModelSpec,
    check_credentials,
    provider_of,
    resolve_model,
)
from llm_aai.llm.client import ChatClient, LiteLLMClient
from llm_aai.llm.errors import LLMError, LLMRequestError, LLMUnavailable, MissingAPIKey
from llm_aai.llm.retry import RetryPolicy, is_transient, retry_after_seconds
from llm_aai.llm.secrets import Secret, redact
from llm_aai.llm.types import (
    LLMResponse,
    Message,
    assistant_message,
    encode_png_data_url,
    image_part,
    system_message,
    text_part,
    user_message,
)

__all__ = [
    "MODEL_ALIASES",
    "ChatClient",
    "LLMError",
    "LLMRequestError",
    "LLMResponse",
    "LLMUnavailable",
    "LiteLLMClient",
    "Message",
    "MissingAPIKey",
    "ModelSpec",
    "RetryPolicy",
    "Secret",
    "assistant_message",
    "check_credentials",
    "encode_png_data_url",
    "image_part",
    "is_transient",
    "provider_of",
    "redact",
    "resolve_model",
    "retry_after_seconds",
    "system_message",
    "text_part",
    "user_message",
]
