"""A plugin MCP server over streamable HTTP whose URL comes from `${settings.endpoint}`: the
server is unreachable until the setting points at it, a settings change reconnects to the
new URL, and the plugin's mcp.json is never rewritten. The server is the real `mcp` demo
server (tests/support/mcp_servers/demo_server.py) on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from llmspace.app import App
from llmspace.paths import DataRoot
from tests.mcp.conftest import DEMO, PY, free_port, start_server, stop_server

from ..builders import make_plugin

SID = "plugin:kb:mcp:remote"
SCHEMA = {"type": "object", "properties": {"endpoint": {"type": "string", "default": "http://127.0.0.1:9"}}}


@pytest.fixture
def http_server() -> Iterator[str]:
    port = free_port()
    proc = start_server([PY, str(DEMO), "http", str(port)], port)
    yield f"http://127.0.0.1:{port}"
    stop_server(proc)


@pytest.fixture
def app(home: Path) -> Iterator[App]:
    application = App(DataRoot(home))
    yield application
    application.close()


def test_an_http_server_url_from_settings_is_used_after_a_settings_change(home: Path, app: App, http_server: str) -> None:
    server = {"id": "remote", "name": "Remote KB", "transport": "streamableHttp", "url": "${settings.endpoint}/mcp"}
    folder = make_plugin(home, "kb", files={"mcp.json": {"servers": [server]}, "config.schema.json": SCHEMA})
    before = (folder / "mcp.json").read_bytes()

    assert {s.id: s.url for s in app.mcp.servers()}[SID] == "http://127.0.0.1:9/mcp"  # the schema default
    app.plugins.update_settings("kb", [("endpoint", http_server)])
    assert {s.id: s.url for s in app.mcp.servers()}[SID] == f"{http_server}/mcp"
    out = app.mcp.call_tool(SID, "echo", {"text": "over http"}, timeout=30)
    assert not out.isError and "over http" in out.text()
    assert (folder / "mcp.json").read_bytes() == before
    assert '"endpoint"' in (home / "settings" / "plugins.json").read_text("utf-8")
