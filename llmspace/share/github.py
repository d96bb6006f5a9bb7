"""GitHub over HTTP for sharing: where the API and the device flow are, and one bounded call.

    api = GitHubApi.from_env()            # LLM_SPACE_GITHUB_API, default https://api.github.com
    api.device_base                       # https://github.com, or the Enterprise server's own origin
    status, body = api.call("POST", api.url("/gists"), token=token, json_body={...}, cancel=cancel)

Every call goes through `origin_session.OriginSession` (a redirect to another origin is refused
before anything is sent there), is bounded in time (connect and read timeouts, and a deadline
over the whole body) and in size (`max_bytes`; more is refused unread), and stops at once when
its `CancelToken` is cancelled (the connection's socket is shut: `origin_session.cancellable_session`, as for
model calls). The token is only ever sent as `Authorization: Bearer …` to the API's
own origin and is in `redact.KNOWN`, so no message or log line shows it. Errors are
`GitHubError` (a `UserFacingError`) with the HTTP status when there was one; `api_error` turns
GitHub's 401, 403/429 rate limits and 404 into words.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import orjson
import requests

from ..cancel import CancelToken
from ..errors import UserFacingError
from ..origin import origin_label
from ..origin_session import CrossOriginRedirect, cancel_with, cancellable_session
from ..redact import KNOWN

API_ENV = "LLM_SPACE_GITHUB_API"
DEFAULT_API = "https://api.github.com"
DEFAULT_WEB = "https://github.com"
API_VERSION = "2022-11-28"
USER_AGENT = "LLM-Space"  # the original's, so GitHub sees one client
CONNECT_TIMEOUT = 10.0
READ_TIMEOUT = 30.0
MAX_API_BYTES = 32 * 1024 * 1024  # a gist's JSON (files over 1 MB come truncated, read by raw_url)


class GitHubError(UserFacingError):
    """A GitHub call failed; `status` is the HTTP status when GitHub answered."""

    def __init__(self, message: str, *, hint: str = "", status: int | None = None) -> None:
        super().__init__(KNOWN.text(message), hint=hint)
        self.status = status


class Cancelled(UserFacingError):
    """The user cancelled (Cancel in a dialog, Ctrl-C, or a newer link)."""


def _base(url: str) -> str:
    text = url.strip()
    parts = urlsplit(text)
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname or parts.username or parts.password:
        raise GitHubError(f"{API_ENV}={text!r} is not an http(s) URL without a user.",
                          hint="Use https://api.github.com, or https://HOST/api/v3 for GitHub Enterprise.")
    return urlunsplit((parts.scheme.lower(), parts.netloc, parts.path.rstrip("/"), "", ""))


@dataclass(frozen=True)
class GitHubApi:
    """Where the REST API is (`base`) and where the device flow runs (`device_base`)."""

    base: str = DEFAULT_API
    device_base: str = DEFAULT_WEB

    @classmethod
    def from_env(cls) -> GitHubApi:
        configured = os.environ.get(API_ENV, "").strip()
        if not configured:
            return cls()
        base = _base(configured)
        if base == DEFAULT_API:
            return cls()
        parts = urlsplit(base)
        return cls(base, urlunsplit((parts.scheme, parts.netloc, "", "", "")))

    def url(self, path: str) -> str:
        return self.base + path

    def call(self, method: str, url: str, *, token: str | None = None, json_body: Any = None,
             accept: str = "application/vnd.github+json", max_bytes: int = MAX_API_BYTES,
             cancel: CancelToken | None = None, what: str = "GitHub") -> tuple[int, dict[str, str], bytes]:
        """One request; returns (status, lower-cased headers, body). Raises `GitHubError` for
        network failures, a cross-origin redirect, a body over `max_bytes` or too slow, and
        `Cancelled` when `cancel` fires."""
        return bounded_call(method, url, token=token, json_body=json_body, accept=accept,
                            max_bytes=max_bytes, cancel=cancel, what=what)


def bounded_call(method: str, url: str, *, token: str | None = None, json_body: Any = None,
                 accept: str = "application/vnd.github+json", max_bytes: int = MAX_API_BYTES,
                 cancel: CancelToken | None = None, what: str = "GitHub") -> tuple[int, dict[str, str], bytes]:
    """`GitHubApi.call` without an API: also used for a gist's `raw_url` (never with a token)."""
    headers = {"Accept": accept, "User-Agent": USER_AGENT}
    if accept.startswith("application/vnd.github"):
        headers["X-GitHub-Api-Version"] = API_VERSION
    if token:
        KNOWN.add([token])
        headers["Authorization"] = f"Bearer {token}"
    if cancel is not None and cancel.cancelled:
        raise Cancelled("Cancelled.")
    where = origin_label(url)
    session = cancellable_session()
    try:
        try:
            with cancel_with(cancel), session.request(method, url, headers=headers, json=json_body, timeout=(CONNECT_TIMEOUT, READ_TIMEOUT),
                                 stream=True, allow_redirects=True) as response:
                length = response.headers.get("Content-Length", "")
                if length.isdigit() and int(length) > max_bytes:
                    raise _too_big(what, where, max_bytes)
                body = _read_body(response, what, where, max_bytes, cancel)
                return response.status_code, {k.lower(): v for k, v in response.headers.items()}, body
        except CrossOriginRedirect as exc:
            raise GitHubError(f"{what} at {where} {exc}; nothing was sent there.") from None
        except requests.Timeout:
            raise GitHubError(f"{what} at {where} did not answer within {READ_TIMEOUT:g} s.",
                              hint="Check the network, then try again.") from None
        except (requests.RequestException, OSError, AttributeError) as exc:
            if cancel is not None and cancel.cancelled:
                raise Cancelled("Cancelled.") from None
            reason = "the connection failed" if isinstance(exc, requests.ConnectionError) else type(exc).__name__
            raise GitHubError(f"Could not reach {what} at {where}: {reason}.",
                              hint="Check the network (and LLM_SPACE_GITHUB_API if it is set).") from None
    finally:
        session.close()


def _too_big(what: str, where: str, max_bytes: int) -> GitHubError:
    return GitHubError(f"{what} at {where} sent more than {max_bytes // (1024 * 1024)} MB; refused, nothing was kept.",
                       hint="A shared thread may be 20 MB at most.")


def _read_body(response: requests.Response, what: str, where: str, max_bytes: int, cancel: CancelToken | None) -> bytes:
    deadline = time.monotonic() + READ_TIMEOUT * 4
    chunks: list[bytes] = []
    size = 0
    for chunk in response.iter_content(65536):
        if cancel is not None and cancel.cancelled:
            raise Cancelled("Cancelled.")
        size += len(chunk)
        if size > max_bytes:
            raise _too_big(what, where, max_bytes)
        if time.monotonic() > deadline:
            raise requests.Timeout()
        chunks.append(chunk)
    return b"".join(chunks)


def json_of(body: bytes, what: str) -> Any:
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError:
        raise GitHubError(f"{what} answered with something that is not JSON.",
                          hint=f"Check {API_ENV} if it is set.") from None


def api_error(status: int, headers: dict[str, str], body: bytes, *, not_found: str, signed_in: bool) -> GitHubError:
    """GitHub's error answer in words (401, 403/429 rate limit, 404, the rest)."""
    message = ""
    try:
        decoded = orjson.loads(body)
        if isinstance(decoded, dict):
            message = str(decoded.get("message") or "")
    except orjson.JSONDecodeError:
        message = body[:200].decode("utf-8", "replace").strip()
    if status == 401:
        return GitHubError("GitHub refused the saved sign-in (HTTP 401): the token was revoked or expired.", status=status,
                           hint="Sign in again: llmspace auth login.")
    if status in (403, 429) and (headers.get("x-ratelimit-remaining") == "0" or "rate limit" in message.lower()):
        reset = headers.get("x-ratelimit-reset", "")
        when = ""
        if reset.isdigit():
            when = " after " + datetime.fromtimestamp(int(reset)).strftime("%H:%M")
        hint = f"Try again{when}." if signed_in else f"Sign in (llmspace auth login) for a higher limit, or try again{when}."
        return GitHubError(f"GitHub's API rate limit is used up (HTTP {status})"
                           + ("" if signed_in else "; anonymous reads are limited to 60 an hour") + ".", status=status, hint=hint)
    if status == 403:
        return GitHubError(f"GitHub refused the request (HTTP 403){': ' + message[:200] if message else '.'}", status=status,
                           hint="Sign in again (llmspace auth login) so the token has the gist scope.")
    if status == 404:
        return GitHubError(not_found, status=status)
    return GitHubError(f"GitHub answered HTTP {status}{': ' + message[:200] if message else '.'}", status=status,
                       hint="Try again later." if status >= 500 else "")
