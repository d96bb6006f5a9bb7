"""`settings/mcp.json`: adding, validating, editing, stale readiness and invalid files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from llmspace.errors import UserFacingError
from llmspace.paths import DataRoot
from llmspace.settings.mcp import McpSettings, Readiness


@pytest.fixture
def settings(home: Path) -> McpSettings:
    return McpSettings(DataRoot(home))


def test_added_servers_get_ids_normalised_names_timestamps_and_a_trailing_newline(settings: McpSettings) -> None:
    cfg = settings.add({"name": "  Git Hub ", "command": "npx", "args": [" -y ", "", "pkg"], "cwd": "  "})
    raw = settings.path.read_bytes()
    assert raw.endswith(b"\n") and not raw.endswith(b"\n\n")
    saved = json.loads(raw)["servers"][0]
    assert saved["id"] == cfg.id and len(cfg.id) == 36
    assert (saved["name"], saved["serverName"], saved["args"], saved["cwd"]) == ("Git Hub", "Git_Hub", ["-y", "pkg"], None)
    assert saved["createdAt"].endswith("Z") and saved["readiness"]["status"] == "untested"


@pytest.mark.parametrize("fields, message", [
    ({"name": ""}, "needs a name"),
    ({"name": "!!"}, "no letters"),
    ({"name": "x", "transport": "stdio"}, "has no command"),
    ({"name": "x", "transport": "sse", "url": "ftp://a"}, "valid http(s) URL"),
])
def test_invalid_drafts_are_refused_with_a_reason(settings: McpSettings, fields: dict[str, str], message: str) -> None:
    with pytest.raises(UserFacingError, match=message.replace("(", r"\(").replace(")", r"\)")):
        settings.add(fields)
    assert not settings.path.exists()


def test_names_must_stay_unique_after_normalisation(settings: McpSettings) -> None:
    settings.add({"name": "my server", "command": "a"})
    with pytest.raises(UserFacingError, match="already exists"):
        settings.add({"name": "my-server", "command": "b"})


def test_an_invalid_file_is_reported_kept_untouched_and_treated_as_empty(settings: McpSettings) -> None:
    settings.path.write_text('{"servers": [{"id": 1}]')
    before = settings.path.read_bytes()
    assert settings.servers() == []
    assert settings.error is not None and "malformed JSON" in str(settings.error)
    with pytest.raises(UserFacingError, match="Not changing"):
        settings.add({"name": "x", "command": "y"})
    assert settings.path.read_bytes() == before


def test_a_schema_mismatch_is_reported_and_kept_untouched(settings: McpSettings) -> None:
    settings.path.write_text('{"servers": [{"name": "no id"}]}')
    assert settings.servers() == [] and "invalid MCP server entry" in str(settings.error)
    settings.set_readiness("x", Readiness(status="ready"))
    assert settings.path.read_text() == '{"servers": [{"name": "no id"}]}'


def test_unknown_keys_are_kept(settings: McpSettings) -> None:
    settings.path.write_text(json.dumps({"servers": [{"id": "a", "name": "a", "transport": "stdio", "command": "c",
                                                      "futureField": 1}], "other": True}))
    settings.update("a", command="d")
    data = json.loads(settings.path.read_text())
    assert data["other"] is True and data["servers"][0]["futureField"] == 1


def test_a_configuration_change_makes_a_tested_server_stale(settings: McpSettings) -> None:
    cfg = settings.add({"name": "s", "command": "c"})
    settings.set_readiness(cfg.id, Readiness(status="ready", toolCount=0, configHash=cfg.config_hash()))
    assert settings.find("s").effective_readiness().status == "ready"
    settings.update("s", args=["--new"])
    assert settings.find("s").effective_readiness().status == "stale"


def test_servers_are_found_by_id_name_or_server_name(settings: McpSettings) -> None:
    cfg = settings.add({"name": "My Server", "command": "c"})
    assert settings.find(cfg.id).id == settings.find("My Server").id == settings.find("My_Server").id == cfg.id
    with pytest.raises(UserFacingError, match="No MCP server named 'nope'"):
        settings.find("nope")


def test_a_file_written_by_the_original_app_loads_and_keeps_its_readiness(settings: McpSettings) -> None:
    original = {"servers": [{
        "id": "5f0c", "name": "Files", "serverName": "Files", "transport": "stdio", "command": "npx",
        "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"], "cwd": None, "env": {},
        "createdAt": "2026-01-01T00:00:00.000Z", "updatedAt": "2026-01-01T00:00:00.000Z",
        "readiness": {"status": "ready", "testedAt": "2026-01-01T00:00:01.000Z", "toolCount": 1,
                      "tools": [{"name": "read_file", "directName": "mcp__Files__read_file", "extra": 1}]}}]}
    settings.path.write_text(json.dumps(original, indent=2) + "\n")
    [cfg] = settings.servers()
    assert settings.error is None
    assert cfg.effective_readiness().status == "ready"
    settings.update("Files", env={"A": "1"})
    data = json.loads(settings.path.read_text())["servers"][0]
    assert data["readiness"]["status"] == "stale"
    assert data["readiness"]["tools"][0]["extra"] == 1 and data["cwd"] is None


def test_a_schema_mismatch_names_the_server_index_and_field(settings: McpSettings) -> None:
    settings.path.write_text('{"servers": [{"id": "a", "name": "ok"}, {"id": "b", "name": "x", "env": {"A": 5}}]}')
    assert settings.servers() == []
    assert "servers[1].env.A" in str(settings.error) and str(settings.path) in str(settings.error)
