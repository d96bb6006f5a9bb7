"""One window per data root: a second start hands its link to the running app's server;
a wrong token or a stale file is not delivered (the caller opens the link itself)."""

from __future__ import annotations

import json
import threading
from pathlib import Path

from llmspace.instance import InstanceServer, hand_off, is_link
from llmspace.paths import DataRoot


def test_a_link_reaches_the_running_server(home: Path) -> None:
    got: list[str] = []
    arrived = threading.Event()
    server = InstanceServer(DataRoot(home), lambda url: (got.append(url), arrived.set()))
    try:
        assert hand_off(DataRoot(home), "llm-space://threads/atlas/a?x=1") is True
        assert arrived.wait(10) and got == ["llm-space://threads/atlas/a?x=1"]
        assert (home / "run" / "instance.json").stat().st_mode & 0o077 == 0
    finally:
        server.close()
    assert not (home / "run" / "instance.json").exists()


def test_a_wrong_token_or_a_stale_file_is_not_delivered(home: Path) -> None:
    got: list[str] = []
    server = InstanceServer(DataRoot(home), got.append)
    try:
        path = home / "run" / "instance.json"
        info = json.loads(path.read_text())
        path.write_text(json.dumps({**info, "token": "guess"}))
        assert hand_off(DataRoot(home), "llm-space://threads/atlas/a") is False
        assert got == []
    finally:
        server.close()
    (home / "run" / "instance.json").write_text(json.dumps({"port": 9, "token": "x"}))
    assert hand_off(DataRoot(home), "llm-space://threads/atlas/a") is False
    assert hand_off(DataRoot(home / "nowhere"), "llm-space://threads/atlas/a") is False


def test_only_llm_space_links_are_links() -> None:
    assert is_link("LLM-SPACE://threads/x/y") and is_link("llm-space-dev://threads/x/y")
    assert not is_link("https://example.com") and not is_link("--gui")
