"""The finiteness check of embedding vectors: NaN and infinity anywhere refused, every
finite float32 (the largest too) accepted."""

from __future__ import annotations

import base64
import struct

import pytest
from llmport.errors import MalformedResponseError
from llmport.messages.embeddings import EmbedResponse, is_finite

LARGEST = 3.4028234663852886e38  # the largest float32: its last byte is 0x7f, yet finite


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf")])
@pytest.mark.parametrize("at", [0, 7, 1535])
def test_a_non_finite_value_anywhere_is_found(bad: float, at: int) -> None:
    values = [0.5] * 1536
    values[at] = bad
    data = struct.pack("<1536f", *values)
    assert not is_finite(data) and not is_finite(bytearray(data))
    with pytest.raises(MalformedResponseError, match="not finite"):
        EmbedResponse.from_base64([base64.b64encode(data).decode()])


@pytest.mark.parametrize("edge", [LARGEST, -LARGEST, 3e38, -1e-45, 0.0, -0.0])
def test_finite_values_whose_exponent_is_high_are_accepted(edge: float) -> None:
    data = struct.pack("<4f", 1.0, edge, edge, -2.0)
    assert is_finite(data)
    assert EmbedResponse.from_base64([base64.b64encode(data).decode()]).dimensions == 4


def test_no_values_are_finite() -> None:
    assert is_finite(b"")
