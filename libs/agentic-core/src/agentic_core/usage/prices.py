"""Per-model prices (per million tokens) and what a usage costs at them."""

from __future__ import annotations

import fnmatch
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from agentic_core.usage.turn_usage import TurnUsage

_MILLION = 1_000_000


@dataclass(frozen=True, slots=True)
class ModelPrice:
    input: float
    cached_input: float
    output: float


class PriceTable:
    """Exact model names first, then `*` / `?` patterns in file order; a model without a price costs nothing."""

    def __init__(self, prices: Mapping[str, ModelPrice], currency: str = "usd") -> None:
        self.exact = {name: price for name, price in prices.items() if not any(char in name for char in "*?[")}
        self.patterns = [(name, price) for name, price in prices.items() if name not in self.exact]
        self.currency = currency

    def __bool__(self) -> bool:
        return bool(self.exact or self.patterns)

    def price_for(self, model: str) -> ModelPrice | None:
        if model in self.exact:
            return self.exact[model]
        return next((price for pattern, price in self.patterns if fnmatch.fnmatchcase(model, pattern)), None)

    def line_items(self, model: str, usage: TurnUsage) -> Iterator[tuple[str, float]]:
        """`(line item, amount)` for the uncached input, the cached input and the output."""
        price = self.price_for(model)
        if price is None:
            return
        uncached = max(0, usage.input_tokens - usage.cached_tokens)
        yield f"{model}, input", uncached * price.input / _MILLION
        yield f"{model}, cached input", usage.cached_tokens * price.cached_input / _MILLION
        yield f"{model}, output", usage.output_tokens * price.output / _MILLION


def _price(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        raise ValueError(f"prices of {name!r}: expected non-negative numbers")
    return float(value)


def parse_prices(document: Any) -> PriceTable:
    """`{"currency": "usd", "models": {model: {input, cached_input, output}}}` or just the `models` mapping;
    prices are per million tokens; `cached_input` defaults to `input`."""
    if not isinstance(document, dict):
        raise ValueError("a prices file is a mapping of model → {input, cached_input, output}")
    currency = document.get("currency", "usd")
    models = document.get("models", document if "currency" not in document else {})
    if not isinstance(currency, str) or not isinstance(models, dict):
        raise ValueError("`currency` is a string and `models` a mapping")
    prices = {}
    for name, entry in models.items():
        if not isinstance(entry, dict) or not set(entry) <= {"input", "cached_input", "output"}:
            raise ValueError(f"prices of {name!r}: expected {{input, cached_input, output}}")
        input_price = _price(entry.get("input", 0), name)
        prices[str(name)] = ModelPrice(input_price, _price(entry.get("cached_input", input_price), name),
                                       _price(entry.get("output", 0), name))
    return PriceTable(prices, currency.lower())
