"""The one secret store of the app: credentials the app holds for the user (trace back-ends'
keys first; GitHub sharing and OpenTelemetry headers later) live here and nowhere else.

    store = SecretStore(root.settings)
    store.set("trace-project:proj_0123456789:langfuse-secret-key", "sk-lf-…")
    store.get("trace-project:proj_0123456789:langfuse-secret-key")   # -> "sk-lf-…" or None
    store.delete(name); store.backend                                 # "keyring" | "file"

- **The OS keyring** (the optional `keyring` package) when it imports and answers: its backend
  is not the "fail" one and a probe read does not raise. The service name carries the settings
  folder (`llm-space:<settings path>`), so two data roots never share a secret.
- **Else a file**, `settings/secrets.json` (`{name: value}`), written by `jsonio`'s atomic writer
  with mode 0600 in the owner-only `settings/` folder.
- `LLM_SPACE_NO_KEYRING=1` forces the file (tests, and machines whose keyring prompts).
- Every value read or written is added to `redact.KNOWN`, so no log line or message shows it.

Provider API keys stay where `settings/models.py` keeps them (models.json, `$ENV` or the
keyring under its own service) for now. Foundation: imports only `jsonio`, `redact` and `errors`.
"""

from __future__ import annotations

import logging
import os
import threading
from pathlib import Path
from typing import Any

from .errors import UserFacingError
from .jsonio import UnreadableFileError, read_json, write_json_atomic
from .redact import KNOWN

FILE_NAME = "secrets.json"
NO_KEYRING_ENV = "LLM_SPACE_NO_KEYRING"
_PROBE = "llm-space-probe"

log = logging.getLogger("llmspace.secrets")


def _usable_keyring() -> Any | None:
    """The keyring backend when `keyring` imports and answers, else None."""
    if os.environ.get(NO_KEYRING_ENV, "").strip() not in ("", "0"):
        return None
    try:
        import keyring
        from keyring.backends import fail
    except Exception:  # not installed, or broken on this system
        return None
    try:
        backend = keyring.get_keyring()
        if isinstance(backend, fail.Keyring):
            return None
        backend.get_password(_PROBE, _PROBE)
    except Exception:  # locked, no D-Bus, no backend: the file it is
        log.info("the OS keyring does not answer; secrets go to settings/%s", FILE_NAME, exc_info=True)
        return None
    return backend


class SecretStore:
    """Named secrets of one data root (`settings_dir` is its `settings/`)."""

    def __init__(self, settings_dir: Path) -> None:
        self.settings_dir = Path(settings_dir)
        self.file = self.settings_dir / FILE_NAME
        self.service = f"llm-space:{self.settings_dir}"
        self._lock = threading.Lock()
        self._keyring = _usable_keyring()

    @property
    def backend(self) -> str:
        return "keyring" if self._keyring is not None else "file"

    @property
    def where(self) -> str:
        """Where the secrets are, in words for a message."""
        return "the OS keyring" if self._keyring is not None else f"settings/{FILE_NAME} (readable by you only)"

    def get(self, name: str) -> str | None:
        value: str | None = None
        if self._keyring is not None:
            try:
                value = self._keyring.get_password(self.service, name)
            except Exception as exc:
                raise UserFacingError(f"The OS keyring could not be read ({type(exc).__name__}).",
                                      hint=f"Unlock it, or set {NO_KEYRING_ENV}=1 to keep secrets in settings/{FILE_NAME}.") from None
        if value is None:
            value = self._read_file().get(name)
        if isinstance(value, str) and value:
            KNOWN.add([value])
            return value
        return None

    def set(self, name: str, value: str) -> None:
        if not value:
            raise UserFacingError("An empty secret cannot be stored.")
        KNOWN.add([value])
        if self._keyring is not None:
            try:
                self._keyring.set_password(self.service, name, value)
            except Exception as exc:
                raise UserFacingError(f"The OS keyring refused to store the secret ({type(exc).__name__}).",
                                      hint=f"Unlock it, or set {NO_KEYRING_ENV}=1 to keep secrets in settings/{FILE_NAME}.") from None
            self._drop_from_file(name)  # one place for each secret
            return
        with self._lock:
            values = self._read_file()
            values[name] = value
            write_json_atomic(self.file, values, mode=0o600)

    def delete(self, name: str) -> None:
        if self._keyring is not None:
            try:
                if self._keyring.get_password(self.service, name) is not None:
                    self._keyring.delete_password(self.service, name)
            except Exception:
                log.warning("could not delete a secret from the OS keyring", exc_info=True)
        self._drop_from_file(name)

    def _drop_from_file(self, name: str) -> None:
        with self._lock:
            values = self._read_file()
            if name in values:
                del values[name]
                write_json_atomic(self.file, values, mode=0o600)

    def _read_file(self) -> dict[str, str]:
        try:
            data = read_json(self.file)
        except UnreadableFileError as exc:
            if exc.missing:
                return {}
            raise
        if not isinstance(data, dict):
            raise UserFacingError(f"settings/{FILE_NAME} is not a JSON object of secrets.",
                                  hint="Move it away; the secrets in it must be entered again.")
        values = {str(k): v for k, v in data.items() if isinstance(v, str)}
        KNOWN.add(values.values())
        return values
