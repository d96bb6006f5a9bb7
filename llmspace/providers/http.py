"""HTTP plumbing shared by the adapters: one cancellable POST, body chunks, error bodies.

- `post(request, url, payload, headers, cancel)` sends one request with connect/read
  timeouts from the `Endpoint`. A redirect is followed only within the endpoint's origin
  (`OriginSession` of `llmspace/origin_session.py`, rule in `llmspace/origin.py`); one to
  another origin is an error (`CrossOriginRedirect`).
  Each call uses its own session (`new_session`) whose sockets are registered with the
  `CancelToken`: Stop shuts the socket down, which unblocks a read in progress at once
  (also while waiting for the response headers).
- `read_chunks(resp, cancel)` yields body bytes as they arrive; a broken connection
  raises `StreamBroken` (unless cancelled, then it just ends).
- `check_headers(provider_id, headers)` raises a settings error for a header HTTP cannot carry
  (characters outside Latin-1), called when an endpoint is resolved (`providers/registry.py`).
- `error_event(...)` turns a non-2xx answer into an `ErrorEvent` with the HTTP status and
  the provider's own message (JSON or plain text), `Retry-After`, and secrets removed.
- `http_events(...)` redacts every `ErrorEvent` it passes on, also the errors a server sends
  mid-stream: secrets are the endpoint's API key and configured header values, by value
  (`secrets_of`, `llmspace/redact.py`), whatever the header's name or the key's shape.
- `api_url(base_url, path)` appends an API path before the base URL's query.
The adapters of this package call these; `new_session`/`api_url` also serve model discovery
and `llmspace models --refresh`, `check_headers` the provider registry.
"""

from __future__ import annotations

import dataclasses
import email.utils
import json
import re
import socket
import time
from collections.abc import Callable, Generator, Iterator, Mapping
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import orjson
import requests
from urllib3.exceptions import HTTPError as Urllib3Error
from urllib3.exceptions import ReadTimeoutError

from ..cancel import CancelToken
from ..errors import UserFacingError, redact
from ..origin_session import CrossOriginRedirect as CrossOriginRedirect
from ..origin_session import cancel_with, cancellable_session
from ..redact import KNOWN, mask_url, secret_values
from .base import ModelRequest, seconds
from .events import ErrorEvent, StreamEvent

# The adapter's parts of one model call (see `http_events`).
OnSse = Callable[[Iterator[tuple[str, str]], CancelToken], Iterator[StreamEvent]]
OnWhole = Callable[[dict[str, Any]], Iterator[StreamEvent]]
Renegotiate = Callable[[int, bytes], dict[str, Any] | None]

RETRYABLE_STATUS = {408, 409, 425, 429, 500, 502, 503, 504, 529}


class StreamBroken(Exception):
    """The connection ended before the stream was complete; `stalled` when the server sent
    nothing for the read timeout."""

    def __init__(self, message: str, stalled: bool = False) -> None:
        super().__init__(message)
        self.stalled = stalled


def no_data_message(provider_id: str, read_timeout: float) -> str:
    """What a stalled server is reported as: before the answer's headers or mid-stream."""
    return (f"{provider_id}: the server sent no data for {seconds(read_timeout)} s. If the model needs longer "
            f"to answer, raise readTimeout for this provider in settings/models.json.")


def new_session() -> requests.Session:
    """A session for calls that carry credentials: redirects stay on the origin
    (`OriginSession`), sockets are registered with the current `CancelToken`, no retries."""
    return cancellable_session()


def api_url(base_url: str, path: str) -> str:
    """`path` (`/chat/completions`) appended to the path of `base_url`, keeping its query:
    `http://h/v1?api-version=x` -> `http://h/v1/chat/completions?api-version=x`."""
    parts = urlsplit(base_url)
    return urlunsplit((parts.scheme, parts.netloc, parts.path.rstrip("/") + path, parts.query, ""))


def header_problem(headers: Mapping[str, str]) -> tuple[str, str] | None:
    """(name, character) of the first header HTTP/1.1 cannot carry: a name or value with a
    character outside Latin-1 or a line break (`requests` would fail on it deep inside
    `http.client`); None when every header can be sent."""
    for name, value in headers.items():
        for ch in f"{name}{value}":
            if ord(ch) > 0xFF or ch in "\r\n\0":
                return name, ch
    return None


def check_headers(provider_id: str, headers: Mapping[str, str], where: str = "settings/models.json") -> None:
    """Raise a settings error naming the provider and the header when a header cannot be sent."""
    problem = header_problem(headers)
    if problem is not None:
        name, ch = problem
        raise UserFacingError(
            f"{where}: provider {provider_id!r}, header {name!r}: {ch!r} cannot be sent in an HTTP header "
            "(only Latin-1 characters, no line breaks).",
            hint="Change the header in Settings › Models (or settings/models.json); nothing was sent.")


def secrets_of(request: ModelRequest) -> list[str]:
    """The endpoint's API key, configured header values (by value, any header name) and the
    secrets in its base URL (a userinfo password, query values: `redact.url_secrets`);
    also remembered process-wide, so logs and other messages leave them out too."""
    ep = request.endpoint
    values = secret_values(ep.api_key, ep.headers, ep.base_url)
    KNOWN.add(values)
    return sorted(values)


def post(request: ModelRequest, url: str, payload: dict[str, Any], headers: dict[str, str],
         cancel: CancelToken) -> requests.Response:
    """POST `payload`; raises `requests.RequestException` on transport errors."""
    ep = request.endpoint
    session = new_session()
    cancel.on_cancel(session.close)
    body = orjson.dumps(payload)
    all_headers = {"Content-Type": "application/json", "Accept": "text/event-stream" if request.stream else "application/json",
                   **ep.headers, **headers}
    with cancel_with(cancel):
        resp = session.post(url, data=body, headers=all_headers, stream=True,
                            timeout=(ep.connect_timeout, ep.read_timeout))
    cancel.on_cancel(resp.close)
    return resp


def read_chunks(resp: requests.Response, cancel: CancelToken) -> Iterator[bytes]:
    raw = resp.raw
    try:
        if getattr(raw, "chunked", False) or not hasattr(raw, "read1"):
            pieces: Iterator[bytes] = resp.iter_content(chunk_size=None)
        else:
            # no chunked framing (HTTP/1.0-style servers): read what has arrived, never wait for EOF
            pieces = iter(lambda: raw.read1(65536, decode_content=True), b"")
        for chunk in pieces:
            if cancel.cancelled:
                return
            yield chunk
    except (requests.RequestException, Urllib3Error, OSError, AttributeError, ValueError) as exc:
        # AttributeError/ValueError: urllib3 reading from a socket closed under it by Stop
        if cancel.cancelled:
            return
        raise StreamBroken(_describe_transport(exc), stalled=_is_stall(exc)) from None
    finally:
        resp.close()


def _is_stall(exc: BaseException) -> bool:
    """A read timeout, however requests/urllib3 wrap it (`iter_content` turns urllib3's
    `ReadTimeoutError` into a `requests.ConnectionError`)."""
    if isinstance(exc, (requests.exceptions.ReadTimeout, ReadTimeoutError, socket.timeout)):
        return True
    return any(isinstance(a, ReadTimeoutError) for a in getattr(exc, "args", ()))


def _describe_transport(exc: BaseException) -> str:
    if _is_stall(exc):
        return "the server stopped sending (read timeout)"
    if isinstance(exc, requests.exceptions.ContentDecodingError):
        return "the body could not be decoded (its Content-Encoding does not match the data)"
    if isinstance(exc, requests.exceptions.ChunkedEncodingError):
        return "the connection was dropped mid-stream"
    return "the connection broke mid-stream"


def transport_error(request: ModelRequest, exc: BaseException) -> ErrorEvent:
    """An `ErrorEvent` for a request that got no HTTP answer (retryable)."""
    ep = request.endpoint
    if isinstance(exc, CrossOriginRedirect):
        # not retryable: the server would redirect again
        msg = (f"{ep.provider_id}: {mask_url(ep.base_url)} {exc} (not followed, so the API key and headers were not sent "
               "there). If the provider has moved, set its new baseUrl in settings/models.json.")
        return ErrorEvent(message=redact(msg, secrets_of(request)), status=None, retryable=False)
    if isinstance(exc, requests.exceptions.ReadTimeout):
        # connected, but not even the response headers came within the read timeout
        return ErrorEvent(message=redact(no_data_message(ep.provider_id, ep.read_timeout), secrets_of(request)),
                          status=None, retryable=True)
    if isinstance(exc, requests.exceptions.ConnectTimeout):
        why = (f"no connection within {seconds(ep.connect_timeout)} s; connectTimeout in "
               "settings/models.json sets this limit")
    elif isinstance(exc, requests.exceptions.ConnectionError):
        why = "connection refused or reset — is the server running?"
    else:
        why = type(exc).__name__
    msg = f"{ep.provider_id}: could not reach {mask_url(ep.base_url)} ({why})."
    return ErrorEvent(message=redact(msg, secrets_of(request)), status=None, retryable=True)


def provider_message(body: bytes, limit: int = 600) -> str:
    """The provider's own error message from a JSON or plain-text error body."""
    text = body.decode("utf-8", "replace").strip()
    try:
        value = orjson.loads(body)
    except orjson.JSONDecodeError:
        value = None
    if isinstance(value, dict):
        err = value.get("error", value)
        if isinstance(err, dict):
            for key in ("message", "msg", "detail", "error"):
                v = err.get(key)
                if isinstance(v, str) and v.strip():
                    return v.strip()[:limit]
                if isinstance(v, dict) and isinstance(message := v.get("message"), str):
                    return message.strip()[:limit]
        if isinstance(err, str) and err.strip():
            return err.strip()[:limit]
        detail = value.get("detail")
        if isinstance(detail, str):
            return detail[:limit]
    if "<html" in text[:200].lower():
        return "the server answered with an HTML page"
    return text[:limit] or "no details given"


def retry_after_seconds(value: str | None) -> float | None:
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def error_event(request: ModelRequest, status: int, body: bytes, headers: Mapping[str, str] | None = None) -> ErrorEvent:
    ep = request.endpoint
    msg = provider_message(body)
    retry_after = retry_after_seconds((headers or {}).get("Retry-After") if headers is not None else None)
    if retry_after is None and headers is not None:
        ms = headers.get("retry-after-ms")
        try:
            retry_after = float(ms) / 1000 if ms else None
        except ValueError:
            retry_after = None
    text = f"{ep.provider_id} returned HTTP {status}: {msg}"
    if status in (401, 403):
        text += " (check the API key in Settings › Models)"
    return ErrorEvent(message=redact(text, secrets_of(request)), status=status,
                      retryable=status in RETRYABLE_STATUS, retry_after=retry_after)


_SURROGATE = re.compile("[\ud800-\udfff]")


def as_object(value: Any) -> dict[str, Any]:
    """`value` when it is a JSON object, else an empty one (for optional nested objects)."""
    return value if isinstance(value, dict) else {}


def json_or_none(data: str | bytes) -> Any:
    """Parsed JSON, or None. orjson refuses lone surrogate escapes (`"\\ud800"`, as some
    servers send when a token splits an emoji); those values are parsed by `json` instead,
    with each lone surrogate replaced by U+FFFD, so the rest of the delta is kept."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        if (b"\\u" not in data) if isinstance(data, bytes) else ("\\u" not in data):
            return None
    try:
        return _without_surrogates(json.loads(data))
    except (ValueError, RecursionError):
        return None


def _without_surrogates(value: Any) -> Any:
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [_without_surrogates(v) for v in value]
    if isinstance(value, dict):
        return {_without_surrogates(k): _without_surrogates(v) for k, v in value.items()}
    return value


def deep_merge(base: dict[str, Any], extra: dict[str, Any] | None) -> dict[str, Any]:
    """`params.extra` merged last: nested objects merge, other values replace (None removes)."""
    if not extra:
        return base
    for k, v in extra.items():
        if v is None:
            base.pop(k, None)
        elif isinstance(v, dict) and isinstance(base.get(k), dict):
            base[k] = deep_merge(dict(base[k]), v)
        else:
            base[k] = v
    return base


def is_event_stream(resp: requests.Response) -> bool:
    return "text/event-stream" in resp.headers.get("Content-Type", "").lower()


def http_events(request: ModelRequest, cancel: CancelToken, url: str, payload: dict[str, Any],
                headers: dict[str, str], on_sse: OnSse, on_whole: OnWhole, renegotiate: Renegotiate | None = None) -> Iterator[StreamEvent]:
    """`_http_events` with the secrets removed from every `ErrorEvent` (HTTP error bodies and
    errors the server sends mid-stream alike)."""
    secrets = secrets_of(request)
    events = _http_events(request, cancel, url, payload, headers, on_sse, on_whole, renegotiate)
    try:
        for event in events:
            if isinstance(event, ErrorEvent):
                event = dataclasses.replace(event, message=redact(event.message, secrets))
            yield event
    finally:
        events.close()  # a consumer that stops early closes the connection at once


def _http_events(request: ModelRequest, cancel: CancelToken, url: str, payload: dict[str, Any],
                 headers: dict[str, str], on_sse: OnSse, on_whole: OnWhole, renegotiate: Renegotiate | None = None) -> Generator[StreamEvent, None, None]:
    """The common flow of one model call: POST, then either an HTTP error (`ErrorEvent`, last
    event), an SSE body (`on_sse(iter of (event, data), cancel)`), or a whole JSON body
    (`on_whole(value)`). `renegotiate(status, body) -> payload | None` may ask for one
    re-send with a changed payload (e.g. without `stream_options`). A Stop yields
    `Finish("aborted")`; a dropped connection yields a retryable `ErrorEvent`."""
    from .events import Finish
    from .sse import SSEUnreadable, iter_sse

    provider = request.endpoint.provider_id
    for attempt in range(2):
        if cancel.cancelled:
            yield Finish("aborted")
            return
        try:
            resp = post(request, url, payload, headers, cancel)
        except (requests.RequestException, OSError) as exc:
            if cancel.cancelled:
                yield Finish("aborted")
                return
            yield transport_error(request, exc)
            return
        if resp.status_code >= 400:
            try:
                body = resp.content
            except (requests.RequestException, OSError):
                body = b""
            finally:
                resp.close()
            if cancel.cancelled:
                yield Finish("aborted")
                return
            if attempt == 0 and renegotiate is not None:
                changed = renegotiate(resp.status_code, body)
                if changed is not None:
                    payload = changed
                    continue
            yield error_event(request, resp.status_code, body, resp.headers)
            return
        break
    try:
        if is_event_stream(resp):
            yield from on_sse(iter_sse(read_chunks(resp, cancel)), cancel)
            return
        body = b"".join(read_chunks(resp, cancel))
    except StreamBroken as exc:
        message = no_data_message(provider, request.endpoint.read_timeout) if exc.stalled else f"{provider}: {exc}."
        yield ErrorEvent(message=message, retryable=True)
        return
    except SSEUnreadable as exc:
        yield ErrorEvent(message=f"{provider}: {exc}.")
        return
    if cancel.cancelled:
        yield Finish("aborted")
        return
    value = json_or_none(body)
    if value is None and body.lstrip()[:5] in (b"data:", b"event"):
        # an event stream sent with the wrong content type
        try:
            yield from on_sse(iter_sse([body]), cancel)
        except SSEUnreadable as exc:
            yield ErrorEvent(message=f"{provider}: {exc}.")
        return
    if not isinstance(value, dict):
        yield ErrorEvent(message=redact(f"{provider} answered with something that is not a model response: {provider_message(body, 200)}",
                                        secrets_of(request)))
        return
    if "error" in value and not any(k in value for k in ("choices", "output", "content")):
        yield ErrorEvent(message=redact(f"{provider} returned an error: {provider_message(body)}", secrets_of(request)))
        return
    yield from on_whole(value)
