"""GitHub sign-in for sharing: the OAuth device flow, and where its token is kept.

    store = AuthStore(root.settings, secrets)          # secrets: the app's SecretStore
    record = sign_in(GitHubApi.from_env(), on_event=print, cancel=token)   # polls until done
    store.save(record); store.load(); store.delete()

**Where the token goes.** The one secret store (`llmspace/secrets.py`) decides: when it has the
OS keyring, the record (`{accessToken, tokenType, scope, user}`) is the keyring secret
`github-auth`; when it has none (or `LLM_SPACE_NO_KEYRING=1`) it is `settings/auth.json` in the
original app's format, mode 0600, so the original app reads it too. A `settings/auth.json` the
original wrote is read either way, and moved to the keyring when there is one. A missing or
malformed record means signed out. Every token read or written is added to `redact.KNOWN`.

**The device flow** (GitHub's, as the original runs it): `POST <device>/login/device/code` with
the client id and scope `gist user:email`; `on_event` gets a `SignInEvent("code", …)` with the
user code and the verification page (a dialog shows them, the CLI prints them); then
`POST <device>/login/oauth/access_token` every `interval` seconds: `authorization_pending`
waits, `slow_down` takes the new interval (else adds 5 s), `expired_token`, `access_denied` and
the code's `expires_in` end it with an error; `cancel` ends the wait at once. Then `GET /user`
and, when it has no email, `/user/emails` (the primary verified address, else a verified one,
else the first). The OAuth app's client id is `CLIENT_ID`, empty until the maintainers register
an app; `LLM_SPACE_GITHUB_CLIENT_ID` sets it.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..cancel import CancelToken
from ..errors import UserFacingError
from ..jsonio import UnreadableFileError, read_json, write_json_atomic
from ..redact import KNOWN
from ..secrets import SecretStore
from .github import Cancelled, GitHubApi, GitHubError, api_error, json_of

CLIENT_ID = ""  # the port's own OAuth app, once the maintainers register one
CLIENT_ID_ENV = "LLM_SPACE_GITHUB_CLIENT_ID"
SCOPE = "gist user:email"
AUTH_FILE = "auth.json"
SECRET_NAME = "github-auth"
GRANT_TYPE = "urn:ietf:params:oauth:grant-type:device_code"
DEFAULT_EXPIRES = 900.0
DEFAULT_INTERVAL = 5.0
SLOW_DOWN_STEP = 5.0

log = logging.getLogger("llmspace.share.auth")


@dataclass
class AuthRecord:
    """A signed-in GitHub account, as `settings/auth.json` holds it."""

    access_token: str
    token_type: str = "bearer"
    scope: str = ""
    user: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"accessToken": self.access_token, "tokenType": self.token_type, "scope": self.scope, "user": self.user}

    @classmethod
    def from_json(cls, value: Any) -> AuthRecord | None:
        """The record of a parsed auth.json, or None when it is not one (signed out)."""
        if not isinstance(value, dict):
            return None
        token = value.get("accessToken")
        if not isinstance(token, str) or not token.strip():
            return None
        KNOWN.add([token])
        user = value.get("user")
        return cls(token, str(value.get("tokenType") or "bearer"), str(value.get("scope") or ""),
                   user if isinstance(user, dict) else {})

    @property
    def login(self) -> str:
        return str(self.user.get("login") or "")


@dataclass(frozen=True)
class SignInEvent:
    """Progress of a sign-in, for a dialog or the terminal.

    kind: `code` (show `user_code`, open `verification_uri`; it expires in `expires_in` s),
    `waiting` (one more poll), `slow_down` (GitHub asked for `interval` s between polls),
    `signed_in` (`login`)."""

    kind: str
    user_code: str = ""
    verification_uri: str = ""
    expires_in: float = 0.0
    interval: float = 0.0
    login: str = ""


def client_id() -> str:
    """The OAuth app's client id, or a `UserFacingError` saying how to set it."""
    value = os.environ.get(CLIENT_ID_ENV, "").strip() or CLIENT_ID
    if not value:
        raise UserFacingError("Sign in with GitHub needs an OAuth app, and this build has none registered yet.",
                              hint=f"Register a GitHub OAuth app with the device flow enabled and set {CLIENT_ID_ENV} to its client id.")
    return value


class AuthStore:
    """The GitHub sign-in of one data root (see the module docstring for where it lives)."""

    def __init__(self, settings_dir: Path, secrets: SecretStore) -> None:
        self.file = Path(settings_dir) / AUTH_FILE
        self.secrets = secrets

    @property
    def where(self) -> str:
        return "the OS keyring" if self.secrets.backend == "keyring" else f"settings/{AUTH_FILE} (readable by you only)"

    def load(self) -> AuthRecord | None:
        """The signed-in account, or None."""
        if self.secrets.backend == "keyring":
            kept = self.secrets.get(SECRET_NAME)
            if kept:
                try:
                    import orjson

                    record = AuthRecord.from_json(orjson.loads(kept))
                except ValueError:
                    record = None
                if record is not None:
                    return record
        record = self._read_file()
        if record is not None and self.secrets.backend == "keyring":
            self.save(record)  # the original app's file, moved to the keyring
        return record

    def save(self, record: AuthRecord) -> None:
        KNOWN.add([record.access_token])
        if self.secrets.backend == "keyring":
            import orjson

            self.secrets.set(SECRET_NAME, orjson.dumps(record.to_json()).decode())
            self._remove_file()
            return
        write_json_atomic(self.file, record.to_json(), mode=0o600)

    def delete(self) -> bool:
        """Sign out; True when there was a sign-in."""
        had = self.load() is not None
        self.secrets.delete(SECRET_NAME)
        self._remove_file()
        return had

    def _read_file(self) -> AuthRecord | None:
        try:
            value = read_json(self.file, max_bytes=1024 * 1024)
        except UnreadableFileError as exc:
            if not exc.missing:
                log.warning("settings/%s is not readable JSON: treated as signed out", AUTH_FILE)
            return None
        except UserFacingError:
            log.warning("settings/%s is not readable JSON: treated as signed out", AUTH_FILE)
            return None
        return AuthRecord.from_json(value)

    def _remove_file(self) -> None:
        try:
            self.file.unlink()
        except FileNotFoundError:
            pass
        except OSError as exc:
            raise UserFacingError(f"Could not delete settings/{AUTH_FILE}: {exc.strerror or exc}.",
                                  hint="Delete it by hand to sign out.") from None


def _post_form(api: GitHubApi, path: str, body: dict[str, str], cancel: CancelToken | None) -> dict[str, Any]:
    status, headers, raw = api.call("POST", api.device_base + path, json_body=body, accept="application/json",
                                    max_bytes=64 * 1024, cancel=cancel, what="GitHub sign-in")
    if status >= 400:
        raise api_error(status, headers, raw, signed_in=False,
                        not_found=f"GitHub at {api.device_base} has no device flow (HTTP 404).")
    data = json_of(raw, "GitHub sign-in")
    if not isinstance(data, dict):
        raise GitHubError("GitHub sign-in answered with something that is not a JSON object.")
    return data


def _number(value: Any, default: float) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0 else default


def sign_in(api: GitHubApi, on_event: Callable[[SignInEvent], object] = lambda e: None,
            cancel: CancelToken | None = None) -> AuthRecord:
    """Run the device flow to its end; the record is not saved (`AuthStore.save`)."""
    cid = client_id()
    cancel = cancel or CancelToken()
    code = _post_form(api, "/login/device/code", {"client_id": cid, "scope": SCOPE}, cancel)
    device_code, user_code, uri = code.get("device_code"), code.get("user_code"), code.get("verification_uri")
    if not (isinstance(device_code, str) and isinstance(user_code, str) and isinstance(uri, str)) or not device_code:
        error = code.get("error_description") or code.get("error") or "no device code"
        raise GitHubError(f"GitHub did not start the sign-in: {error}.",
                          hint=f"Check that {CLIENT_ID_ENV} names an OAuth app with the device flow enabled.")
    KNOWN.add([device_code])
    expires_in = _number(code.get("expires_in"), DEFAULT_EXPIRES)
    interval = _number(code.get("interval"), DEFAULT_INTERVAL)
    deadline = time.monotonic() + expires_in
    on_event(SignInEvent("code", user_code=user_code, verification_uri=uri, expires_in=expires_in, interval=interval))
    while True:
        if cancel.wait(interval):
            raise Cancelled("Sign-in cancelled.")
        if time.monotonic() >= deadline:
            raise GitHubError("The sign-in code expired before it was entered.", hint="Sign in again.")
        answer = _post_form(api, "/login/oauth/access_token",
                            {"client_id": cid, "device_code": device_code, "grant_type": GRANT_TYPE}, cancel)
        token = answer.get("access_token")
        if isinstance(token, str) and token:
            KNOWN.add([token])
            record = AuthRecord(token, str(answer.get("token_type") or "bearer"), str(answer.get("scope") or ""))
            record.user = fetch_user(api, token, cancel)
            on_event(SignInEvent("signed_in", login=record.login))
            return record
        error = answer.get("error")
        if error == "authorization_pending":
            on_event(SignInEvent("waiting", interval=interval))
        elif error == "slow_down":
            interval = _number(answer.get("interval"), interval + SLOW_DOWN_STEP)
            on_event(SignInEvent("slow_down", interval=interval))
        elif error == "expired_token":
            raise GitHubError("The sign-in code expired before it was entered.", hint="Sign in again.")
        elif error == "access_denied":
            raise GitHubError("The sign-in was declined on GitHub.", hint="Sign in again and choose Authorize.")
        else:
            raise GitHubError(f"GitHub ended the sign-in: {answer.get('error_description') or error or 'no token'}.")


def fetch_user(api: GitHubApi, token: str, cancel: CancelToken | None = None) -> dict[str, Any]:
    """`{login, name, email, avatarUrl, htmlUrl}` of the token's account."""
    status, headers, raw = api.call("GET", api.url("/user"), token=token, max_bytes=1024 * 1024, cancel=cancel)
    if status >= 400:
        raise api_error(status, headers, raw, signed_in=True, not_found="GitHub has no /user (HTTP 404): check LLM_SPACE_GITHUB_API.")
    data = json_of(raw, "GitHub")
    data = data if isinstance(data, dict) else {}
    email = data.get("email") if isinstance(data.get("email"), str) and data.get("email") else None
    if email is None:
        email = _primary_email(api, token, cancel)
    return {"login": str(data.get("login") or ""), "name": data.get("name") if isinstance(data.get("name"), str) else None,
            "email": email, "avatarUrl": data.get("avatar_url"), "htmlUrl": data.get("html_url")}


def _primary_email(api: GitHubApi, token: str, cancel: CancelToken | None) -> str | None:
    status, _, raw = api.call("GET", api.url("/user/emails"), token=token, max_bytes=1024 * 1024, cancel=cancel)
    if status >= 400:
        return None  # no user:email scope granted: an account without an address
    data = json_of(raw, "GitHub")
    emails = [e for e in data if isinstance(e, dict) and isinstance(e.get("email"), str)] if isinstance(data, list) else []
    for pick in (lambda e: e.get("primary") and e.get("verified"), lambda e: e.get("verified"), lambda e: True):
        for entry in emails:
            if pick(entry):
                return str(entry["email"])
    return None
