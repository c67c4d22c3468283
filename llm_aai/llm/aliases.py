"""Short model names and the API-key environment variable each provider needs.

One table maps the aliases used on the command line to litellm model strings; change a
model here and nowhere else. Any other name is passed to litellm as is, so every
provider litellm knows (``anthropic/``, ``openai/``, ``gemini/``, ``ollama_chat/``,
``hosted_vllm/``...) works without a code change.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from llm_aai.llm.errors import MissingAPIKey
from llm_aai.llm.quiet_import import import_litellm

__all__ = [
    "MODEL_ALIASES",
    "PROVIDER_KEY_ENV",
    "ModelSpec",
    "check_credentials",
    "provider_of",
    "resolve_model",
]

#: alias -> litellm model string. Vision-capable chat models that accept temperature 0.
MODEL_ALIASES: dict[str, str] = {
    "claude": "anthropic/claude-sonnet-4-6",
    "gpt": "openai/gpt-4o",
    "gemini": "gemini/gemini-2.5-pro",
}

#: provider prefix -> environment variables litellm reads the key from (first is canonical).
#: An empty tuple means the provider runs locally and needs no key.
PROVIDER_KEY_ENV: dict[str, tuple[str, ...]] = {
    "anthropic": ("ANTHROPIC_API_KEY",),
    "openai": ("OPENAI_API_KEY",),
    "gemini": ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
    "mistral": ("MISTRAL_API_KEY",),
    "groq": ("GROQ_API_KEY",),
    "openrouter": ("OPENROUTER_API_KEY",),
    "together_ai": ("TOGETHERAI_API_KEY", "TOGETHER_API_KEY"),
    "xai": ("XAI_API_KEY",),
    "deepseek": ("DEEPSEEK_API_KEY",),
    "fireworks_ai": ("FIREWORKS_API_KEY",),
    "ollama": (),
    "ollama_chat": (),
    "hosted_vllm": (),
    "lm_studio": (),
}


@dataclass(frozen=True)
class ModelSpec:
    """A resolved model: the litellm string and where its key comes from.

    Attributes:
        litellm_model: passed verbatim to ``litellm.completion(model=...)``.
        api_key_env: the canonical key variable, or None if no key is needed or the
            provider authenticates another way (cloud credentials files).
        alt_key_envs: other variables litellm also accepts for this provider.
        alias: the short name it was resolved from, if any.

    """

    litellm_model: str
    api_key_env: str | None
    alt_key_envs: tuple[str, ...] = ()
    alias: str | None = None

    @property
    def provider(self) -> str:
        """The provider prefix (``anthropic``, ``openai``...)."""
        return provider_of(self.litellm_model)

    @property
    def key_envs(self) -> tuple[str, ...]:
        """Every variable that can hold the key, canonical first."""
        return ((self.api_key_env,) if self.api_key_env else ()) + self.alt_key_envs


def provider_of(model: str) -> str:
    """Return the provider prefix of a litellm model string.

    Prefixes in our key table are taken as they are. Anything else (a bare name such as
    ``gpt-4o``, or a prefix we do not list) is checked with litellm's own provider
    inference, imported lazily, so a typo fails here, before a run starts, instead of at
    the first model call.
    """
    prefix, slash, _name = model.partition("/")
    if slash and prefix in PROVIDER_KEY_ENV:
        return prefix
    litellm = import_litellm()
    try:
        return litellm.get_llm_provider(model)[1]
    except Exception as exc:  # litellm raises BadRequestError for unknown providers
        if slash:
            hint = (f"litellm knows no provider {prefix!r}; see "
                    "https://docs.litellm.ai/docs/providers for the prefixes")
        else:
            hint = "write it as '<provider>/<model>' (e.g. openai/gpt-4o)"
        raise ValueError(f"cannot tell the provider of model {model!r}: {hint}, or use an "
                         f"alias: {', '.join(MODEL_ALIASES)}") from exc


def resolve_model(name: str) -> ModelSpec:
    """Turn an alias or a litellm model string into a :class:`ModelSpec`."""
    name = name.strip()
    if not name:
        raise ValueError("empty model name")
    alias = name if name in MODEL_ALIASES else None
    model = MODEL_ALIASES.get(name, name)
    envs = PROVIDER_KEY_ENV.get(provider_of(model))
    if not envs:
        return ModelSpec(model, None, (), alias)
    return ModelSpec(model, envs[0], envs[1:], alias)


def check_credentials(spec: ModelSpec, api_base: str | None = None,
                      api_key: str | None = None) -> None:
    """Fail fast, before any episode starts, if the model cannot authenticate.

    A key passed explicitly or an ``api_base`` (a local or self-hosted
    OpenAI-compatible server, which usually ignores keys) is enough. Providers outside
    our table are checked with ``litellm.validate_environment``.

    Raises:
        MissingAPIKey: naming the environment variable(s) to set.

    """
    if api_key or api_base:
        return
    if spec.provider in PROVIDER_KEY_ENV:
        envs = spec.key_envs
        if envs and not any(os.environ.get(env) for env in envs):
            raise MissingAPIKey(spec.litellm_model, envs)
        return
    litellm = import_litellm()
    missing = litellm.validate_environment(model=spec.litellm_model).get("missing_keys") or []
    if missing:
        raise MissingAPIKey(spec.litellm_model, tuple(missing))
