"""litellm's prices read from its shipped list without importing it agree with litellm's own."""

from __future__ import annotations

import subprocess
import sys

import litellm
import pytest

from llm_aai.llm import pricing
from llm_aai.llm.aliases import MODEL_ALIASES
from llm_aai.llm.pricing import Prices, bundled_entry, litellm_prices

PROVIDERS = ("openai", "anthropic", "gemini", "mistral", "deepseek", "ollama", "groq",
             "xai", "together_ai", "openrouter", "vertex_ai", "bedrock")


def _litellm_says(model: str) -> Prices | None:
    try:
        info = litellm.get_model_info(model)
    except Exception:  # noqa: BLE001 - an unmapped model
        return None
    if info.get("input_cost_per_token") is None or info.get("output_cost_per_token") is None:
        return None
    return Prices(info["input_cost_per_token"] * 1e6, info["output_cost_per_token"] * 1e6)


def _models_of_the_list() -> list[str]:
    """Every entry of the main providers, as a run names it: provider/name."""
    models = []
    for key, entry in pricing._bundled_prices().items():
        provider = entry.get("litellm_provider") if isinstance(entry, dict) else None
        if provider in PROVIDERS:
            models.append(key if key.startswith(f"{provider}/") else f"{provider}/{key}")
    return models


def test_the_shipped_list_answers_the_aliases_as_litellm_does():
    for model in MODEL_ALIASES.values():
        assert bundled_entry(model) is not None, model
        assert litellm_prices(model) == _litellm_says(model) is not None


def test_every_entry_the_list_answers_is_priced_as_litellm_prices_it():
    models = _models_of_the_list()
    assert len(models) > 500
    answered = [model for model in models if bundled_entry(model) is not None]
    assert len(answered) > 0.7 * len(models)  # the others (no token prices): litellm
    differ = [model for model in answered if litellm_prices(model) != _litellm_says(model)]
    assert differ == []


@pytest.mark.parametrize("model", ["openai/no-such-model", "anthropic/gpt-4o", "gpt-4o",
                                   "hosted_vllm/my-model"])
def test_a_model_the_list_does_not_hold_plainly_is_asked_of_litellm(model):
    """A bare name, or a name under another provider's prefix, is litellm's to resolve."""
    assert bundled_entry(model) is None
    assert litellm_prices(model) == _litellm_says(model)


def test_pricing_a_listed_model_does_not_import_litellm():
    code = ("import sys; from llm_aai.llm.pricing import litellm_prices; "
            "print(litellm_prices('openai/gpt-4o')); print('litellm' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, check=True)
    assert done.stdout.splitlines() == ["Prices(input_per_mtok=2.5, output_per_mtok=10.0)",
                                        "False"]


def test_without_the_local_price_list_litellm_is_asked(monkeypatch):
    """Unset, litellm fetches a newer list at import: the shipped one may not be its list."""
    monkeypatch.delenv("LITELLM_LOCAL_MODEL_COST_MAP")
    assert bundled_entry("openai/gpt-4o") is None
