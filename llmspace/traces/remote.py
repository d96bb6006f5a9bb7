"""HTTP for the connected trace back-ends (Langfuse, Phoenix): one bounded JSON GET.

Every call goes through `origin_session.OriginSession` (a redirect to another origin is
refused before anything is sent there), is bounded in time (connect and read timeouts, and a
deadline over the whole body) and in size (`MAX_BODY_BYTES`), and its failure is a
`RemoteError` saying which of the key, the project, the URL or the network is wrong
(`what`), in words that never hold the credentials (they are in `redact.KNOWN`).

A client's `cancel` (a `CancelToken`, e.g. a sync's Cancel) stops a call in flight at once: the
session is `origin_session.cancellable_session()`, whose socket `cancel_with` shuts when the
token is cancelled, and the call then raises `Cancelled` (also when cancelled before it starts).
"""

from __future__ import annotations

import time
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import orjson
import requests

from ..cancel import CancelToken
from ..errors import UserFacingError
from ..origin import origin_label
from ..origin_session import CrossOriginRedirect, cancel_with, cancellable_session
from ..redact import KNOWN

MAX_BODY_BYTES = 64 * 1024 * 1024
CONNECT_TIMEOUT = 10.0
READ_TIMEOUT = 60.0


class RemoteError(UserFacingError):
    """A call to a trace back-end failed; `what` is `key`, `project`, `url` or `network`."""

    def __init__(self, message: str, what: str, *, hint: str = "", status: int | None = None) -> None:
        super().__init__(KNOWN.text(message), hint=hint)
        self.what = what
        self.status = status


class Cancelled(RemoteError):
    """The call was cancelled (its connection shut); nothing it would have read was kept."""

    def __init__(self) -> None:
        super().__init__("Cancelled.", "cancelled")


def normalise_base_url(url: str, label: str) -> str:
    """Trimmed, http(s) only, without query, fragment or trailing `/` (a path prefix is kept)."""
    text = url.strip()
    parts = urlsplit(text)
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise RemoteError(f"{label} URL {text!r} is not an http(s) URL.", "url",
                          hint="Give the address the server answers on, such as https://cloud.langfuse.com.")
    if parts.username or parts.password:
        raise RemoteError(f"{label} URL must not carry a user or password; the keys are asked for separately.", "url")
    return urlunsplit((parts.scheme.lower(), parts.netloc, parts.path.rstrip("/"), "", ""))


class JsonClient:
    """GETs JSON from one base URL with fixed headers; `label` names the back-end in messages."""

    def __init__(self, base_url: str, label: str, headers: dict[str, str], *,
                 timeout: tuple[float, float] = (CONNECT_TIMEOUT, READ_TIMEOUT), max_bytes: int = MAX_BODY_BYTES) -> None:
        self.base_url = base_url
        self.label = label
        self.headers = {"Accept": "application/json", **headers}
        self.timeout = timeout
        self.max_bytes = max_bytes
        self.cancel: CancelToken | None = None
        self.session = cancellable_session()

    def close(self) -> None:
        self.session.close()

    def get(self, path: str, params: dict[str, Any] | None = None, *, not_found: str = "") -> Any:
        """The decoded JSON of `GET base+path`; `not_found` replaces the 404 message (a 404 of
        an endpoint means a wrong base URL, of a project path a wrong project)."""
        url = self.base_url + path
        where = origin_label(self.base_url)
        clean = {k: v for k, v in (params or {}).items() if v is not None and v != ""}
        if self.cancelled:
            raise Cancelled()
        try:
            with cancel_with(self.cancel), self.session.get(url, params=clean, headers=self.headers, timeout=self.timeout,
                                                            stream=True, allow_redirects=True) as response:
                body = self._body(response, where)
                status = response.status_code
        except (requests.RequestException, OSError) as exc:
            if self.cancelled:
                raise Cancelled() from None
            raise self._failure(exc, where) from None
        if self.cancelled:  # a shut socket can look like the end of a close-delimited body
            raise Cancelled()
        if status >= 400:
            raise self._status_error(status, body, path, where, not_found)
        try:
            return orjson.loads(body)
        except orjson.JSONDecodeError:
            raise RemoteError(f"{self.label} at {where} answered {path} with something that is not JSON.", "url",
                              hint=f"Check that the URL is the {self.label} server's base URL.") from None

    @property
    def cancelled(self) -> bool:
        return self.cancel is not None and self.cancel.cancelled

    def _failure(self, exc: Exception, where: str) -> RemoteError:
        if isinstance(exc, CrossOriginRedirect):
            return RemoteError(f"{self.label} at {where} {exc}; nothing was sent there.", "url",
                               hint="Give the server's own address as the URL.")
        if isinstance(exc, requests.Timeout):
            return RemoteError(f"{self.label} at {where} did not answer within {self.timeout[1]:g} s.", "network",
                               hint="Check that the server is up, then try again.")
        reason = type(exc).__name__
        if isinstance(exc, requests.ConnectionError):
            reason = "the connection failed (nothing answers at that address, or the network is down)"
        return RemoteError(f"Could not reach {self.label} at {where}: {reason}.", "network",
                           hint="Check the URL and the network.")

    def _body(self, response: requests.Response, where: str) -> bytes:
        deadline = time.monotonic() + self.timeout[1] * 2
        chunks: list[bytes] = []
        size = 0
        for chunk in response.iter_content(65536):
            if self.cancelled:
                raise Cancelled()
            size += len(chunk)
            if size > self.max_bytes:
                raise RemoteError(f"{self.label} at {where} sent more than {self.max_bytes // (1024 * 1024)} MB for one "
                                  "request; not read.", "network", hint="Sync fewer traces at a time.")
            if time.monotonic() > deadline:
                raise requests.Timeout()
            chunks.append(chunk)
        return b"".join(chunks)

    def _status_error(self, status: int, body: bytes, path: str, where: str, not_found: str) -> RemoteError:
        if status == 401:
            return RemoteError(f"{self.label} at {where} rejected the key (HTTP 401).", "key", status=status,
                               hint="Check the key, then connect again.")
        if status == 403:
            return RemoteError(f"The key has no access to this {self.label} project (HTTP 403).", "project", status=status,
                               hint="Use a key of the project that holds the traces.")
        if status == 404:
            return RemoteError(not_found or f"{self.label} at {where} has no {path} (HTTP 404).", "url", status=status,
                               hint="" if not_found else f"Check the base URL: it is the {self.label} server's address.")
        message = ""
        try:
            decoded = orjson.loads(body)
            if isinstance(decoded, dict):
                message = str(decoded.get("message") or decoded.get("error") or decoded.get("detail") or "")
        except orjson.JSONDecodeError:
            message = body[:200].decode("utf-8", "replace").strip()
        return RemoteError(f"{self.label} request failed ({status})" + (f": {message[:300]}" if message else "."),
                           "network" if status >= 500 else "url", status=status)
