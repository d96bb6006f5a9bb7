"""The one registry mechanism: canonical IDs, sources, collisions, listeners."""

from __future__ import annotations

import pytest

from llmspace.errors import UserFacingError
from llmspace.registry import BUILTIN, Registry, plugin_source


def test_a_source_registering_an_id_again_replaces_its_own_entry() -> None:
    reg: Registry[int] = Registry("tool")
    reg.register("a", 1)
    reg.register("a", 2)
    assert reg.get("a") == 2
    assert reg.conflicts() == []


def test_two_sources_with_one_id_are_both_inactive_and_the_conflict_names_both() -> None:
    reg: Registry[str] = Registry("tool")
    reg.register("plugin:x:tool:t", "one", source=plugin_source("x"), files=("tools/t.py",))
    reg.register("plugin:x:tool:t", "two", source="user")
    assert reg.get("plugin:x:tool:t") is None
    assert "plugin:x:tool:t" not in reg
    [conflict] = reg.conflicts()
    assert set(conflict.sources) == {"plugin:x", "user"}
    assert "plugin:x (tools/t.py)" in conflict.message and "user" in conflict.message
    with pytest.raises(UserFacingError) as err:
        reg.require("plugin:x:tool:t")
    assert "plugin:x" in str(err.value)


def test_removing_one_party_of_a_conflict_makes_the_other_active_again() -> None:
    reg: Registry[str] = Registry("provider")
    reg.register("p", "built", source=BUILTIN)
    reg.register("p", "plug", source=plugin_source("acme"))
    assert reg.unregister_source(plugin_source("acme")) == 1
    assert reg.get("p") == "built"
    assert [r.source for r in reg.active()] == [BUILTIN]


def test_require_says_what_is_missing() -> None:
    reg: Registry[int] = Registry("model API")
    with pytest.raises(UserFacingError, match="No model API 'nope'"):
        reg.require("nope", hint="Install the plugin that provides it.")


def test_listeners_hear_every_change_and_can_unsubscribe() -> None:
    reg: Registry[int] = Registry("command")
    seen: list[int] = []
    stop = reg.subscribe(lambda: seen.append(len(reg.active())))
    reg.register("a", 1)
    reg.register("b", 2, source="user")
    reg.unregister("a", BUILTIN)
    stop()
    reg.register("c", 3)
    assert seen == [1, 2, 1]
    assert reg.ids() == ["b", "c"]
    assert [r.canonical_id for r in reg.by_source("user")] == ["b"]
