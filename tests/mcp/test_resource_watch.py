"""A changed resource reaches its watcher (`McpHub.watch_resources`): `subscriptions/listen`
against the features server, which speaks 2026-07-28."""

from __future__ import annotations

import threading
from pathlib import Path

from llmspace.mcp.hub import McpHub

from .test_elicitation import add_features


def test_a_changed_resource_is_reported_to_its_watcher(hub: McpHub, home: Path) -> None:
    add_features(hub, home)
    changed: list[str] = []
    seen = threading.Event()

    def on_changed(uri: str) -> None:
        changed.append(uri)
        seen.set()

    stop = hub.extras.watch_resources("features", ["features://notes"], on_changed)
    try:
        assert hub.call_tool("features", "touch", {"uri": "features://notes"}).text().startswith("touched")
        assert seen.wait(60)
        assert changed == ["features://notes"]
    finally:
        stop()
