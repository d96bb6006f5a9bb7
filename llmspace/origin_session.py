"""`OriginSession`: a `requests.Session` that applies `llmspace/origin.py`'s redirect rule, so
an API key or configured header never follows a redirect to another origin.

    with OriginSession() as s:
        s.get(url, headers={"X-Subscription-Token": key})   # a 30x to another origin raises
                                                             # CrossOriginRedirect, nothing sent there

`requests` itself drops only `Authorization` when a redirect leaves the host; every other
header (Anthropic's `x-api-key`, Brave's `X-Subscription-Token`, configured `api-key`,
`X-Auth-Token`, …) would go along. `rebuild_auth` is the hook `requests` calls for each
redirect hop before it sends it, so the rule (`origin.same_origin`) is checked there, on
every hop. Model provider calls (`llmspace/providers/http.py`) and the web built-ins
(`llmspace/tools/builtins/web.py`) send their credentials through it. Part of the
foundation: any layer may use it.

`cancellable_session()` is an `OriginSession` without retries whose sockets can be shut by a
`CancelToken`: a request made inside `with cancel_with(token):` registers each connection it
opens, and cancelling the token shuts that socket down, which ends a read in progress at once
(also one still waiting for the response headers).

    session = cancellable_session()
    with cancel_with(cancel):
        response = session.post(url, data=body, stream=True, timeout=(10, 30))
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator
from typing import Any

import requests
from requests.adapters import HTTPAdapter
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool

from .cancel import CancelToken
from .origin import refusal, same_origin

_local = threading.local()  # the CancelToken of the request this thread is making


class CrossOriginRedirect(requests.RequestException):
    """A redirect to another origin, refused before anything was sent there (`llmspace/origin.py`)."""


class OriginSession(requests.Session):
    """A `requests.Session` that never sends a request to another origin on a redirect."""

    def rebuild_auth(self, prepared_request: requests.PreparedRequest, response: requests.Response) -> None:
        sent = response.request.url or ""
        target = prepared_request.url or ""
        if not same_origin(sent, target):
            raise CrossOriginRedirect(refusal(target), response=response)
        super().rebuild_auth(prepared_request, response)  # type: ignore[no-untyped-call]


def _shutdown(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass


def _register(conn: Any) -> None:
    token: CancelToken | None = getattr(_local, "token", None)
    sock = getattr(conn, "sock", None)
    if token is not None and sock is not None:
        token.on_cancel(lambda: _shutdown(sock))


class _Conn(HTTPConnection):
    def connect(self) -> None:
        super().connect()
        _register(self)


class _SConn(HTTPSConnection):
    def connect(self) -> None:
        super().connect()
        _register(self)


class _Pool(HTTPConnectionPool):
    ConnectionCls = _Conn


class _SPool(HTTPSConnectionPool):
    ConnectionCls = _SConn


class _CancellableAdapter(HTTPAdapter):
    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = {"http": _Pool, "https": _SPool}


def cancellable_session() -> OriginSession:
    """An `OriginSession` without retries whose connections `cancel_with` ties to a token."""
    session = OriginSession()
    adapter = _CancellableAdapter(max_retries=0)
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    return session


@contextlib.contextmanager
def cancel_with(cancel: CancelToken | None) -> Iterator[None]:
    """Connections a `cancellable_session` opens on this thread inside the block are shut when
    `cancel` is cancelled."""
    _local.token = cancel
    try:
        yield
    finally:
        _local.token = None
