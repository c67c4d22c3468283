"""The prices a run counts its cost at: the user's, else litellm's.

A run and its dry run both need them, and a model without a price is said out loud once: a
budget could never stop a run whose cost is unknown.
"""

from __future__ import annotations

import sys

from llm_aai.agents import AgentSpec
from llm_aai.llm.pricing import Prices, litellm_prices
from llm_aai.runner.errors import RunError
from llm_aai.settings import RunConfig


def run_prices(config: RunConfig, agent: AgentSpec) -> Prices | None:
    """The model's prices: the user's, else litellm's; an unknown price is said out loud.

    Without a price a run's cost cannot be counted, so a budget could never stop it: that is
    refused, and otherwise the user is warned once that costs will show as unknown.

    Raises:
        RunError: a budget for a model without a price.

    """
    if agent.kind != "model":
        return None
    given = config.model_options.price_per_mtok
    if given is not None:
        return Prices(*given)
    model = agent.describe()["litellm_model"]
    prices = litellm_prices(model)
    if prices is None and config.budget_usd is not None:
        raise RunError(f"litellm has no price for {model}, so --budget-usd could not be kept; "
                       "give its prices with --price-per-mtok INPUT,OUTPUT (dollars per "
                       "million tokens)")
    if prices is None:
        print(f"warning: litellm has no price for {model}: its cost shows as unknown; give "
              "--price-per-mtok INPUT,OUTPUT to count it", file=sys.stderr)
    elif prices.input_per_mtok == prices.output_per_mtok == 0:  # litellm's Ollama entries
        print(f"warning: litellm prices {model} at $0 (a model on your own hardware): its "
              "cost shows as $0.00, not what the hardware costs; give --price-per-mtok "
              "INPUT,OUTPUT to count it", file=sys.stderr)
    return prices
