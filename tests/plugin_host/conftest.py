"""`start_plugin`: write a plugin folder into tmp_path, start a real host on it and
initialize it; every host is closed after the test."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from .client import Handler, HostClient, write_plugin

Started = tuple[HostClient, dict[str, dict[str, Any]]]


@pytest.fixture
def start_plugin(tmp_path: Path) -> Iterator[Callable[..., Started]]:
    clients: list[HostClient] = []

    def start(files: dict[str, str], handler: Handler | None = None) -> Started:
        root = write_plugin(tmp_path / "plugin", files)
        client = HostClient(tmp_path, handler)
        clients.append(client)
        answer = client.initialize(root)
        return client, {f"{e['kind']}:{e['id']}": e for e in answer["extensions"]}

    yield start
    for client in clients:
        client.close()
