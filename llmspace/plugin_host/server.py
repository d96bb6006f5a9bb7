"""The host's request router: `initialize`, `execute`, `cancel`, `shutdown`, `ping`
(`docs/plugin-protocol.md`, Lifecycle).

`Host.dispatch` gets every request and notification the app sends, on the main thread; it
answers `initialize`, `shutdown` and `ping` itself and hands calls to `calls.Calls`.
Returns False when the host should exit (after answering `shutdown`).
"""

from __future__ import annotations

import sys
import traceback
from pathlib import Path
from typing import Any

from ..plugin_protocol import (
    CANCEL,
    EXECUTE,
    INITIALIZE,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PING,
    PROTOCOL_VERSION,
    SHUTDOWN,
)
from . import loading
from .calls import Calls
from .rpc import Connection


class Host:
    def __init__(self, conn: Connection) -> None:
        self._conn = conn
        self._calls = Calls(conn)
        self._initialized = False

    def dispatch(self, message: dict[str, Any]) -> bool:
        try:
            return self._dispatch(message)
        except Exception as exc:  # a bug of the host must not end it: answer and log
            traceback.print_exc()
            if isinstance(message.get("id"), str | int):
                self._conn.respond_error(message["id"], INTERNAL_ERROR, f"the plugin host failed: {type(exc).__name__}: {exc}")
            return True

    def _dispatch(self, message: dict[str, Any]) -> bool:
        method, params = message.get("method"), message.get("params", {})
        is_request = "id" in message
        request_id = message.get("id")
        if not isinstance(method, str) or (is_request and not isinstance(request_id, str | int)):
            self._conn.respond_error(request_id if isinstance(request_id, str | int) else None,
                                     INVALID_REQUEST, "method must be a string and id a string or an integer")
            return True
        if not isinstance(params, dict):
            if is_request:
                self._conn.respond_error(request_id, INVALID_PARAMS, "params must be an object")
            return True
        if method == CANCEL:
            self._calls.cancel(params)
            if is_request:
                self._conn.respond(request_id, None)
            return True
        if not is_request:
            return True  # other notifications mean nothing to the host
        if method == EXECUTE:
            self._calls.execute(request_id, params)
        elif method == PING:
            self._conn.respond(request_id, {})
        elif method == INITIALIZE:
            self._initialize(request_id, params)
        elif method == SHUTDOWN:
            self._conn.respond(request_id, self._calls.shutdown())
            return False
        else:
            self._conn.respond_error(request_id, METHOD_NOT_FOUND, f"unknown method {method!r}")
        return True

    def _initialize(self, request_id: Any, params: dict[str, Any]) -> None:
        if self._initialized:
            self._conn.respond_error(request_id, INVALID_REQUEST, "the host is initialized already")
            return
        version = params.get("protocolVersion")
        plugin, files = params.get("plugin"), params.get("files")
        if version != PROTOCOL_VERSION:
            self._conn.respond_error(request_id, INVALID_PARAMS, f"protocolVersion {version!r} is not supported (this host speaks {PROTOCOL_VERSION})")
            return
        if not isinstance(plugin, dict) or not isinstance(plugin.get("root"), str) or not isinstance(files, list):
            self._conn.respond_error(request_id, INVALID_PARAMS, "initialize needs plugin.root and a list of files")
            return
        self._initialized = True
        loading.prepare_path(Path(plugin["root"]))
        extensions = loading.load([f if isinstance(f, dict) else {} for f in files])
        self._calls.set_extensions(extensions)
        runtime = {"name": "python", "version": "{}.{}.{}".format(*sys.version_info[:3])}
        self._conn.respond(request_id, {"runtime": runtime, "extensions": [e.describe() for e in extensions]})
