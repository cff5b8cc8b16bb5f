"""The ``units`` toolset: conversions a model should not do in its head."""

from __future__ import annotations

from typing import Literal

from llmport import Toolset, tool

LengthUnit = Literal["mm", "cm", "m", "km", "in", "ft", "mi"]
TemperatureUnit = Literal["C", "F", "K"]

_METRES = {
    "mm": 0.001,
    "cm": 0.01,
    "m": 1.0,
    "km": 1000.0,
    "in": 0.0254,
    "ft": 0.3048,
    "mi": 1609.344,
}


@tool
def convert_length(value: float, from_unit: LengthUnit, to_unit: LengthUnit) -> float:
    """Convert a length between units.

    Args:
        value: The length to convert.
        from_unit: The unit of ``value``.
        to_unit: The unit to convert to.
    """
    return round(value * _METRES[from_unit] / _METRES[to_unit], 6)


@tool
def convert_temperature(
    value: float, from_unit: TemperatureUnit, to_unit: TemperatureUnit
) -> float:
    """Convert a temperature between Celsius, Fahrenheit and Kelvin.

    Args:
        value: The temperature to convert.
        from_unit: The unit of ``value``.
        to_unit: The unit to convert to.
    """
    celsius = {"C": value, "F": (value - 32) * 5 / 9, "K": value - 273.15}[from_unit]
    out = {"C": celsius, "F": celsius * 9 / 5 + 32, "K": celsius + 273.15}[to_unit]
    return round(out, 6)


def make_toolset() -> Toolset:
    """A fresh ``units`` toolset."""
    return Toolset(
        "units",
        [convert_length, convert_temperature],
        description="Length and temperature conversion",
    )
