"""The one registry mechanism: canonical IDs, sources, collisions, listeners."""

from __future__ import annotations

import pytest

from llmspace.errors import UserFacingError
from llmspace.registries import Registries
from llmspace.registry import BUILTIN, USER, Registry, plugin_source


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


def test_replace_source_makes_a_sources_contributions_exactly_the_given_ones_with_one_notice() -> None:
    reg: Registry[str] = Registry("model provider")
    reg.register("openai", "built", source=BUILTIN)
    seen: list[list[str]] = []
    reg.subscribe(lambda: seen.append(reg.ids()))
    assert reg.replace_source(USER, {"loop": "a", "mine": "b"})
    assert not reg.replace_source(USER, {"loop": "a", "mine": "b"})  # unchanged: no notice
    assert reg.replace_source(USER, {"mine": "c"})
    assert seen == [["openai", "loop", "mine"], ["openai", "mine"]]
    assert reg.get("mine") == "c" and reg.get("openai") == "built"


def test_the_app_builds_one_registries_object_and_its_services_fill_it(app) -> None:
    regs = app.registries
    assert isinstance(regs, Registries)
    assert app.providers.apis is regs.apis and app.providers.providers is regs.providers
    assert app.tools.executors is regs.tools and app.skills.sources is regs.skill_sources
    assert "builtin:tool:read" in regs.tools and "openai-completions" in regs.apis
    assert regs.commands.ids() == [] and regs.thread_storages.ids() == []
    assert app.run_services.providers is app.providers and app.runner.services is app.run_services
    regs.commands.register("plugin:a:command:x", _Named("X"), source=plugin_source("a"))
    regs.commands.register("plugin:a:command:x", _Named("Y"), source=plugin_source("b"))
    assert [c.canonical_id for c in regs.conflicts()] == ["plugin:a:command:x"]
    assert regs.unregister_source(plugin_source("b")) == 1 and regs.conflicts() == []


def test_user_mcp_servers_are_registered_from_mcp_json(app, home) -> None:
    (home / "settings").mkdir(exist_ok=True)
    (home / "settings" / "mcp.json").write_text(
        '{"servers": [{"id": "srv-1", "name": "Docs", "transport": "stdio", "command": "true"}]}', encoding="utf-8")
    app.sync_mcp_servers()
    [reg] = app.registries.mcp_servers.active()
    assert reg.canonical_id == "srv-1" and reg.source == USER and reg.value.name == "Docs"


class _Named:
    def __init__(self, name: str) -> None:
        self.display_name = name
