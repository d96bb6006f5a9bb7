"""With an OS keyring, the GitHub sign-in is a keyring secret and no file holds the token; an
auth.json the original app wrote is read and moved there; sign-out removes it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import keyring
import pytest

from llmspace.app import App
from llmspace.paths import DataRoot
from tests.test_secrets import MemoryKeyring

from .github_server import TOKEN, GitHubServer


@pytest.fixture
def memory_keyring(github: GitHubServer, monkeypatch: pytest.MonkeyPatch) -> Iterator[MemoryKeyring]:
    monkeypatch.delenv("LLM_SPACE_NO_KEYRING", raising=False)
    before = keyring.get_keyring()
    backend = MemoryKeyring()
    keyring.set_keyring(backend)
    yield backend
    keyring.set_keyring(before)


def _files_holding_the_token(home: Path) -> list[Path]:
    return [p for p in home.rglob("*") if p.is_file() and TOKEN.encode() in p.read_bytes()]


def test_with_a_keyring_sign_in_keeps_the_token_there_and_in_no_file(home: Path, memory_keyring: MemoryKeyring) -> None:
    app = App(DataRoot(home))
    try:
        record = app.sharing.sign_in()
        assert app.sharing.auth.where == "the OS keyring"
        assert app.sharing.status() is not None and app.sharing.status().access_token == TOKEN  # type: ignore[union-attr]
        assert _files_holding_the_token(home) == []
        assert any(TOKEN in v for v in memory_keyring.passwords.values()) and record.login == "octo"
        assert app.sharing.sign_out() is True
        assert not any(TOKEN in v for v in memory_keyring.passwords.values())
    finally:
        app.close()


def test_an_auth_json_the_original_wrote_is_moved_to_the_keyring(home: Path, memory_keyring: MemoryKeyring) -> None:
    app = App(DataRoot(home))
    try:
        auth = app.root.settings / "auth.json"
        auth.write_text(json.dumps({"accessToken": TOKEN, "tokenType": "bearer", "scope": "gist,user:email",
                                    "user": {"login": "octo", "name": None, "email": None}}), "utf-8")
        record = app.sharing.status()
        assert record is not None and record.login == "octo"
        assert not auth.exists() and _files_holding_the_token(home) == []
        assert app.sharing.status() is not None  # read back from the keyring
    finally:
        app.close()
