"""The app's end of the host pipe writes its lines (llmspace/plugins/hosts/connection.py,
`encode_line`) as the standard `json` module writes them (byte for byte but for the spelling
of some floats' exponents), with the same refusals (NaN, the infinities, lone surrogates, what is not JSON) and integers of any size."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

from llmspace.plugins.hosts.connection import encode_line


def _json(message: Any) -> bytes:
    return json.dumps(message, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode() + b"\n"


@pytest.mark.parametrize("message", [
    {"jsonrpc": "2.0", "id": 7, "method": "execute", "params": {"input": {"arguments": {"text": "ping"}}}},
    {"text": "Zürich → 東京 😀", "quote": "\"\\\n\t\u0001", "empty": {}, "list": [[], [1, 2.5, -0.0, 1e300]]},
    {"nothing": None, "flags": [True, False], "nullable": "null"},
    {"big": 2 ** 70, "negative": -(2 ** 65), "max": 2 ** 63 - 1},
    {1: "a key that is a number", "nested": {2.5: "a float key"}},
])
def test_a_line_is_what_json_writes(message: dict[Any, Any]) -> None:
    assert encode_line(message) == _json(message)


def test_floats_keep_their_exact_value() -> None:
    floats = [0.1, 1.5e-7, 1e16, 2.5e-308, 1.7976931348623157e308, 123456.789, -3.0]
    line = encode_line({"floats": floats})
    assert line.endswith(b"\n") and json.loads(line)["floats"] == floats  # 1.5e-7, where json writes 1.5e-07


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_nan_and_the_infinities_are_refused_as_json_refuses_them(value: float) -> None:
    with pytest.raises(ValueError, match="Out of range float values are not JSON compliant"):
        encode_line({"arguments": {"x": [1, {"y": value}]}})


def test_a_lone_surrogate_is_refused_before_anything_is_written() -> None:
    with pytest.raises(UnicodeEncodeError):
        encode_line({"text": "half a pair \ud800"})


def test_values_that_are_not_json_are_refused() -> None:
    with pytest.raises(TypeError):
        encode_line({"when": object()})
