"""The one secret store: the OS keyring when it answers, else settings/secrets.json (0600);
LLM_SPACE_NO_KEYRING=1 forces the file; every value is known to the redactor."""

from __future__ import annotations

import stat
from pathlib import Path

import keyring
import pytest
from keyring.backend import KeyringBackend
from keyring.backends import fail
from keyring.errors import PasswordDeleteError

from llmspace.paths import DataRoot
from llmspace.redact import KNOWN
from llmspace.secrets import SecretStore


class MemoryKeyring(KeyringBackend):
    """A keyring backend holding passwords in a dict, as a real backend plugs into `keyring`."""

    priority = 10  # type: ignore[assignment]

    def __init__(self) -> None:
        super().__init__()
        self.passwords: dict[tuple[str, str], str] = {}

    def get_password(self, service: str, username: str) -> str | None:
        return self.passwords.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self.passwords[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        if self.passwords.pop((service, username), None) is None:
            raise PasswordDeleteError(username)


class LockedKeyring(MemoryKeyring):
    def get_password(self, service: str, username: str) -> str | None:
        raise keyring.errors.KeyringLocked("locked")


@pytest.fixture
def memory_keyring(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv("LLM_SPACE_NO_KEYRING", raising=False)
    before = keyring.get_keyring()
    backend = MemoryKeyring()
    keyring.set_keyring(backend)
    yield backend
    keyring.set_keyring(before)


def _settings(home: Path) -> Path:
    return DataRoot(home).settings


def test_with_a_keyring_the_secret_goes_to_it_and_no_file_holds_it(home: Path, memory_keyring: MemoryKeyring) -> None:
    store = SecretStore(_settings(home))
    assert store.backend == "keyring"
    store.set("trace-project:p1:secret", "sk-lf-keyring-secret-1234")
    assert store.get("trace-project:p1:secret") == "sk-lf-keyring-secret-1234"
    assert (f"llm-space:{_settings(home)}", "trace-project:p1:secret") in memory_keyring.passwords
    assert not any("sk-lf-keyring-secret-1234" in p.read_text(errors="replace") for p in home.rglob("*") if p.is_file())
    store.delete("trace-project:p1:secret")
    assert store.get("trace-project:p1:secret") is None


def test_two_data_roots_never_share_a_secret_in_the_keyring(tmp_path: Path, memory_keyring: MemoryKeyring) -> None:
    a = SecretStore(_settings(tmp_path / "a"))
    b = SecretStore(_settings(tmp_path / "b"))
    a.set("k", "value-of-root-a")
    assert b.get("k") is None


def test_without_a_keyring_the_secret_goes_to_an_owner_only_file(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LLM_SPACE_NO_KEYRING", raising=False)
    before = keyring.get_keyring()
    keyring.set_keyring(fail.Keyring())
    try:
        store = SecretStore(_settings(home))
    finally:
        keyring.set_keyring(before)
    assert store.backend == "file"
    store.set("trace-project:p1:secret", "sk-lf-file-secret-5678")
    path = _settings(home) / "secrets.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert SecretStore(_settings(home)).get("trace-project:p1:secret") == "sk-lf-file-secret-5678"


def test_a_keyring_that_does_not_answer_means_the_file(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LLM_SPACE_NO_KEYRING", raising=False)
    before = keyring.get_keyring()
    keyring.set_keyring(LockedKeyring())
    try:
        assert SecretStore(_settings(home)).backend == "file"
    finally:
        keyring.set_keyring(before)


def test_no_keyring_env_forces_the_file_even_with_a_keyring(home: Path, memory_keyring: MemoryKeyring,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LLM_SPACE_NO_KEYRING", "1")
    store = SecretStore(_settings(home))
    assert store.backend == "file"
    store.set("x", "forced-file-secret-9")
    assert memory_keyring.passwords == {}
    assert "forced-file-secret-9" in (_settings(home) / "secrets.json").read_text()


def test_every_stored_value_is_redacted_from_messages(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LLM_SPACE_NO_KEYRING", "1")
    SecretStore(_settings(home)).set("y", "never-shown-secret-42")
    assert KNOWN.text("the key never-shown-secret-42 was rejected") == "the key *** was rejected"
