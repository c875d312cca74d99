"""Three small tools showing the ok / hint / error contract."""

from __future__ import annotations

import difflib
from datetime import date
from enum import StrEnum
from typing import Annotated

from agentic_tools import hint, ok, tool
from pydantic import Field


class Unit(StrEnum):
    """A unit of length or mass."""

    metre = "m"
    kilometre = "km"
    mile = "mi"
    foot = "ft"
    inch = "in"
    gram = "g"
    kilogram = "kg"
    pound = "lb"


# Each unit in its dimension's base unit (metre, gram).
_LENGTH = {Unit.metre: 1.0, Unit.kilometre: 1000.0, Unit.mile: 1609.344, Unit.foot: 0.3048, Unit.inch: 0.0254}
_MASS = {Unit.gram: 1.0, Unit.kilogram: 1000.0, Unit.pound: 453.59237}


@tool
def convert_units(value: float, from_unit: Unit, to_unit: Unit):
    """Convert a length or a mass from one unit to another.

    Args:
        value: The quantity to convert.
        from_unit: The unit of `value`.
        to_unit: The unit wanted.
    """
    for table in (_LENGTH, _MASS):
        if from_unit in table and to_unit in table:
            converted = value * table[from_unit] / table[to_unit]
            return ok({"value": round(converted, 6), "unit": to_unit.value})
    same_dimension = _LENGTH if from_unit in _LENGTH else _MASS
    return hint(
        f"Cannot convert {from_unit.value} to {to_unit.value}: one is a length, the other a mass.",
        alternatives=[unit.value for unit in same_dimension if unit != from_unit],
    )


# Illustrative fixed rates (units of each currency per US dollar), not live data.
RATES_PER_USD = {"USD": 1.0, "EUR": 0.92, "GBP": 0.79, "JPY": 151.4, "CHF": 0.9, "CAD": 1.36, "AUD": 1.52, "INR": 83.3}


@tool(name="convert_currency")
def convert_currency(from_currency: str, to_currency: str, amount: Annotated[float, Field(ge=0)] = 1.0):
    """Convert an amount between currencies at fixed example rates.

    Args:
        from_currency: ISO 4217 code of the currency held, e.g. EUR.
        to_currency: ISO 4217 code of the currency wanted.
        amount: How much of `from_currency`.
    """
    codes = []
    for code in (from_currency, to_currency):
        normalised = code.strip().upper()
        if normalised not in RATES_PER_USD:
            close = difflib.get_close_matches(normalised, RATES_PER_USD, n=3, cutoff=0.3)
            return hint(f"Unknown currency {code!r}.", alternatives=close or sorted(RATES_PER_USD))
        codes.append(normalised)
    source, target = codes
    converted = amount / RATES_PER_USD[source] * RATES_PER_USD[target]
    return {"amount": round(converted, 2), "currency": target, "rates": "fixed example rates"}


@tool
async def days_between(start: date, end: date) -> dict[str, int]:
    """Count the days from `start` to `end` (negative when `end` comes first). Dates are YYYY-MM-DD."""
    return {"days": (end - start).days}
