from __future__ import annotations

import pytest

from llm_aai.llm import MODEL_ALIASES, MissingAPIKey, check_credentials, resolve_model


def test_aliases_resolve_to_priced_vision_models():
    import litellm

    for alias, model in MODEL_ALIASES.items():
        spec = resolve_model(alias)
        assert spec.litellm_model == model and spec.alias == alias
        bare = model.split("/", 1)[1]
        info = litellm.model_cost.get(model) or litellm.model_cost.get(bare)
        assert info is not None, f"{model} unknown to litellm's price map"
        assert info.get("supports_vision"), f"{model} is not a vision model"


@pytest.mark.parametrize(("name", "env"), [
    ("claude", "ANTHROPIC_API_KEY"), ("gpt", "OPENAI_API_KEY"), ("gemini", "GEMINI_API_KEY"),
    ("anthropic/claude-sonnet-4-5", "ANTHROPIC_API_KEY"), ("gpt-4o", "OPENAI_API_KEY"),
])
def test_missing_key_names_the_variable(monkeypatch, name, env):
    for var in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    spec = resolve_model(name)
    assert spec.api_key_env == env
    with pytest.raises(MissingAPIKey, match=env):
        check_credentials(spec)
    monkeypatch.setenv(env, "k")
    check_credentials(spec)


def test_gemini_accepts_google_api_key(monkeypatch):
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    monkeypatch.setenv("GOOGLE_API_KEY", "k")
    check_credentials(resolve_model("gemini"))


@pytest.mark.parametrize("name", ["ollama_chat/llava", "hosted_vllm/Qwen/Qwen2-VL-7B"])
def test_local_providers_need_no_key(name):
    spec = resolve_model(name)
    assert spec.api_key_env is None
    check_credentials(spec)


def test_api_base_or_explicit_key_is_enough(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    spec = resolve_model("openai/my-local")
    check_credentials(spec, api_base="http://127.0.0.1:8000/v1")
    check_credentials(spec, api_key="k")


def test_unknown_bare_name_is_a_clear_error():
    with pytest.raises(ValueError, match="provider"):
        resolve_model("definitely-not-a-model")
