"""Interpolation of plugin mcp.json / models.json strings (plugin guide §5.2)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from llmspace.plugins.package.interpolate import env_references, interpolate

SETTINGS = {"endpoint": "https://api.example.com", "workspace": "demo", "timeout": 30, "debug": False,
            "network": {"endpoint": "https://net.example"}, "tags": ["a", "b"], "nothing": None, "obj": {"k": 1}}
ENV = {"EXAMPLE_API_TOKEN": "tok-123", "EMPTY": ""}


@pytest.mark.parametrize(("text", "expected"), [
    ("$EXAMPLE_API_TOKEN", "tok-123"),
    ("$MISSING_VARIABLE", ""),
    ("$EMPTY", ""),
    ("Bearer $EXAMPLE_API_TOKEN", "Bearer $EXAMPLE_API_TOKEN"),  # only a whole string reads the environment
    ("$EXAMPLE_API_TOKEN/x", "$EXAMPLE_API_TOKEN/x"),
    ("${settings.endpoint}/v1", "https://api.example.com/v1"),
    ("Workspace: ${settings.workspace}", "Workspace: demo"),
    ("${settings.network.endpoint}", "https://net.example"),
    ("${settings.timeout}", "30"),
    ("${settings.debug}", "false"),
    ("${settings.tags}", '["a","b"]'),
    ("${settings.obj}", '{"k":1}'),
    ("${settings.nothing}", "null"),
    ("${settings.missing}", ""),
    ("${settings.network.missing.deeper}", ""),
    ("${settings.workspace}-${settings.timeout}", "demo-30"),
    ("${env.HOME}", "${env.HOME}"),
    ("plain text", "plain text"),
    ("", ""),
])
def test_interpolation_table(text: str, expected: str) -> None:
    assert interpolate(text, SETTINGS, ENV) == expected


def test_inserted_text_is_not_interpolated_again() -> None:
    assert interpolate("${settings.a}", {"a": "${settings.b}", "b": "x"}, {}) == "${settings.b}"
    assert interpolate("$A", {}, {"A": "${settings.b}"}) == "${settings.b}"


def test_nested_values_are_interpolated_and_the_input_is_left_alone() -> None:
    config: dict[str, Any] = {"servers": [{"id": "kb", "url": "${settings.endpoint}/mcp", "timeout": 5,
                                           "headers": {"Authorization": "$EXAMPLE_API_TOKEN"}, "$KEY": "keys stay"}]}
    before = copy.deepcopy(config)
    out = interpolate(config, SETTINGS, ENV)
    assert out == {"servers": [{"id": "kb", "url": "https://api.example.com/mcp", "timeout": 5,
                                "headers": {"Authorization": "tok-123"}, "$KEY": "keys stay"}]}
    assert config == before
    assert env_references(config) == {"EXAMPLE_API_TOKEN"}


def test_the_process_environment_is_the_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PLUGIN_TEST_VALUE", "from-env")
    assert interpolate({"a": "$PLUGIN_TEST_VALUE"}, {}) == {"a": "from-env"}
