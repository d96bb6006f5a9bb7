"""The MCP connections of a hub: one asyncio loop thread and one live connection per server.

`ConnectionPool` starts its loop thread on first use (`mcp` is imported only there) and keeps
one cached `Connection` per server: a connection that died or whose configuration changed is
closed and opened again, and concurrent connects to one server share one attempt (a caller
that gives up cancels it for all). Requests run on the loop as tracked tasks (`submit`,
`run`), so `close()` — at app exit, Ctrl-C, or from `atexit` — cancels every request in flight
at once (the SDK tells each server with `notifications/cancelled`), then closes every
connection, giving stdio children `grace` seconds before a signal. The SDK's own warnings go
to `logs/mcp.log`, not to the terminal or the GUI's stderr.

`McpHub` (`mcp/hub.py`) is the synchronous API over it.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import logging
import threading
import time
from collections.abc import Coroutine
from pathlib import Path
from typing import Any, TypeVar

from ..errors import UserFacingError
from .connection import Connection, Target
from .diagnose import describe
from .loop import LoopThread

T = TypeVar("T")

# On close (app exit, Ctrl-C): in-flight requests are cancelled at once; a stdio server still
# running this long after its stdin closed gets SIGTERM, and SIGKILL as long again after that.
SHUTDOWN_GRACE = 0.3


class _SdkLogHandler(logging.Handler):
    """Appends records to `path` (opened per record: the SDK logs rarely)."""

    path: Path | None = None

    def emit(self, record: logging.LogRecord) -> None:
        if self.path is None:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with open(self.path, "a", encoding="utf-8") as f:
                f.write(self.format(record) + "\n")
        except Exception:
            pass


class ConnectionPool:
    """The loop thread and the cached connections of one hub. Thread-safe."""

    def __init__(self, sdk_log: Path, connect_timeout: float) -> None:
        self.sdk_log = sdk_log
        self.connect_timeout = connect_timeout
        self._lock = threading.Lock()
        self._loop: LoopThread | None = None
        # Loop-thread-only state:
        self._conns: dict[str, Connection] = {}
        self._connecting: dict[str, asyncio.Future[Connection]] = {}
        self._live: set[Connection] = set()
        self._requests: set[asyncio.Task[Any]] = set()  # in flight; cancelled at once by close()

    def _loop_thread(self) -> LoopThread:
        with self._lock:
            if self._loop is None or not self._loop.alive:
                self._route_sdk_logs()
                self._loop = LoopThread()
                atexit.register(self.close)  # children must not outlive the app
            return self._loop

    def _route_sdk_logs(self) -> None:
        """Send the SDK's own warnings (tracebacks of dropped connections) to `logs/mcp.log`
        of the latest hub, not to the terminal or the GUI's stderr."""
        sdk = logging.getLogger("mcp")
        handler = next((h for h in sdk.handlers if isinstance(h, _SdkLogHandler)), None)
        if handler is None:
            handler = _SdkLogHandler()
            handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
            sdk.addHandler(handler)
            sdk.propagate = False
        handler.path = self.sdk_log

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Run a request coroutine on the loop, tracked so `close()` can cancel it at once."""
        return self._loop_thread().submit(self._tracked(coro))

    async def _tracked(self, coro: Coroutine[Any, Any, T]) -> T:
        task = asyncio.current_task()
        assert task is not None
        self._requests.add(task)
        try:
            return await coro
        finally:
            self._requests.discard(task)

    def run(self, coro: Coroutine[Any, Any, T], timeout: float) -> T:
        """`submit` and wait; TimeoutError (the request cancelled) after `timeout` seconds."""
        fut = self.submit(coro)
        try:
            return fut.result(timeout)
        except concurrent.futures.TimeoutError:
            fut.cancel()
            raise TimeoutError() from None

    def drop(self, server_id: str) -> None:
        """Close the server's connection (if the loop runs); waits up to 15 s, never raises."""
        with self._lock:
            loop = self._loop
        if loop is not None and loop.alive:
            try:
                loop.submit(self.close_connection(server_id)).result(15)
            except Exception:
                pass

    async def close_connection(self, server_id: str) -> None:
        """On the loop: close and forget the server's connection."""
        conn = self._conns.pop(server_id, None)
        if conn is not None:
            await conn.close()
            self._live.discard(conn)

    async def connection(self, target: Target) -> Connection:
        """On the loop: the server's open connection, opened (or reopened) if needed. A failed
        connect raises `UserFacingError` describing it."""
        conn = self._conns.get(target.server_id)
        if conn is not None:
            if conn.alive and conn.target.config_hash == target.config_hash:
                return conn
            await self.close_connection(target.server_id)  # died, or its config changed: reconnect
        pending = self._connecting.get(target.server_id)
        if pending is not None:
            return await asyncio.shield(pending)
        fut: asyncio.Future[Connection] = asyncio.get_running_loop().create_future()
        self._connecting[target.server_id] = fut
        conn = Connection(target)
        self._live.add(conn)
        try:
            try:
                await conn.open(self.connect_timeout)
            except asyncio.CancelledError:  # the caller gave up, or close() (which ends the child itself)
                if conn.closed:
                    self._live.discard(conn)
                fut.cancel()  # callers sharing this attempt stop waiting too
                raise
            except BaseException as exc:
                self._live.discard(conn)
                err = UserFacingError(describe(exc, target, phase="connect", timeout=self.connect_timeout,
                                               junk_lines=conn.junk_lines))
                fut.set_exception(err)
                fut.exception()
                raise err from None
            self._conns[target.server_id] = conn
            fut.set_result(conn)
            return conn
        finally:
            self._connecting.pop(target.server_id, None)

    async def _close_all(self, grace: float) -> None:
        """Cancel the requests in flight (the SDK tells each server with `notifications/cancelled`),
        then close every connection; stdio children get `grace` seconds before a signal."""
        started = time.monotonic()
        requests = [t for t in self._requests if not t.done()]
        for task in requests:
            task.cancel()
        if requests:  # normally at once; one stuck (e.g. in a connect) uses up part of the grace
            await asyncio.wait(requests, timeout=grace)
        grace = max(0.0, grace - (time.monotonic() - started))
        conns = list(self._live) + [c for c in self._conns.values() if c not in self._live]
        self._conns.clear()
        self._live.clear()
        await asyncio.gather(*(c.close(grace=grace) for c in conns), return_exceptions=True)

    def close(self, grace: float = SHUTDOWN_GRACE) -> None:
        """Cancel every request in flight, close every connection (ending stdio children
        within about `2 * grace` seconds) and stop the loop thread. A later request starts a
        new loop."""
        with self._lock:
            loop, self._loop = self._loop, None
        atexit.unregister(self.close)
        if loop is not None:
            loop.stop(self._close_all(grace))
