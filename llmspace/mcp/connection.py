"""One live MCP client connection, owned by one task on the hub's asyncio loop.

The `mcp.Client` is entered AND exited inside `_own` (anyio cancel scopes must exit in
the task that entered them). Everything here runs on the loop thread of
`llmspace.mcp.hub.McpHub`; `mcp` is imported only inside the coroutines, never at module
import. Each stdio server's stderr (and notes about non-MCP lines on its stdout) goes to
`logs/mcp-<serverName>.log` (the name encoded by `paths.safe_component`). Over HTTP/SSE the
SDK gets its httpx client from `mcp_http_client`, which refuses a redirect to another origin.
Every client declares elicitation (form and URL); a request reaches the tool call it belongs
to through its `CallChannel` (`mcp/elicitation.py` says who answers).
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import os
import queue
import signal
import sys
from collections.abc import Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Literal, TextIO, cast
from urllib.parse import urljoin

from .. import __version__
from ..errors import UserFacingError, redact
from ..origin import refusal, same_origin
from ..redact import mask_url
from .elicitation import Decline, ElicitationAnswer, ElicitationRequest, note, unsupported_schema

log = logging.getLogger("llmspace.mcp")

CONNECTION_CLOSED = -32000
_CURRENT: contextvars.ContextVar[Connection | None] = contextvars.ContextVar("llmspace_mcp_conn", default=None)
_CHANNEL: contextvars.ContextVar[CallChannel | None] = contextvars.ContextVar("llmspace_mcp_call", default=None)


@dataclass
class Target:
    """A server configuration with `$VAR`s resolved, ready to connect (built by the hub)."""

    server_id: str
    name: str
    server_name: str
    transport: str
    config_hash: str
    command: str = ""
    args: list[str] = field(default_factory=list)
    cwd: str | None = None
    env: dict[str, str] = field(default_factory=dict)
    url: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    secrets: list[str] = field(default_factory=list)
    log_path: Path | None = None


class CallChannel:
    """One tool call's line to the thread that made it: the loop puts each elicitation in
    `inbox` (with a future for the answer); that thread answers it (`McpHub.call_tool`). The
    notes for the tool result gather in `notes`."""

    def __init__(self, tool: str) -> None:
        self.tool = tool
        self.inbox: queue.Queue[tuple[ElicitationRequest, asyncio.Future[ElicitationAnswer]] | None] = queue.Queue()
        self.notes: list[str] = []
        self._loop = asyncio.get_running_loop()

    async def ask(self, request: ElicitationRequest) -> ElicitationAnswer:
        reply: asyncio.Future[ElicitationAnswer] = self._loop.create_future()
        self.inbox.put((request, reply))
        return await reply

    def answer(self, reply: asyncio.Future[ElicitationAnswer], answer: ElicitationAnswer) -> None:
        """From any thread."""
        def settle() -> None:
            if not reply.done():
                reply.set_result(answer)
        self._loop.call_soon_threadsafe(settle)


class CrossOriginRedirect(UserFacingError):
    """An MCP server answered with a redirect to another origin; nothing was sent there."""


def mcp_http_client(server_name: str) -> Callable[..., Any]:
    """The httpx client factory handed to the `mcp` SDK for server `server_name`: the SDK's own
    client (`create_mcp_http_client`, its timeouts) plus a response hook that refuses every
    redirect to another origin (`llmspace/origin.py`, the rule the model providers follow) before
    anything is sent there, whatever the SDK version does with redirects itself. Same-origin
    redirects are left to the SDK (it follows those)."""

    def factory(headers: dict[str, str] | None = None, timeout: Any = None, auth: Any = None) -> Any:
        from mcp.shared._httpx_utils import create_mcp_http_client

        client = create_mcp_http_client(headers=headers, timeout=timeout, auth=auth)

        async def refuse_other_origins(response: Any) -> None:
            location = response.headers.get("location") if response.is_redirect else None
            if location is not None:
                sent = str(response.request.url)
                if not same_origin(sent, location):
                    raise CrossOriginRedirect(
                        f"MCP server {server_name!r}: {mask_url(sent)} {refusal(urljoin(sent, location))} "
                        "(not followed, so its headers were not sent there).",
                        hint="If the server has moved, set its new URL in Settings › MCP.")

        client.event_hooks = {**client.event_hooks,
                              "response": [*client.event_hooks.get("response", []), refuse_other_origins]}
        return client

    return factory


class _JunkFilter(logging.Filter):
    """Turns the SDK's 'Failed to parse JSONRPC message' tracebacks into one note per line in
    the server's own log, instead of a traceback on the app's stderr."""

    def filter(self, record: logging.LogRecord) -> bool:
        conn = _CURRENT.get()
        if conn is None or not str(record.msg).startswith("Failed to parse JSONRPC message"):
            return True
        conn.junk_lines += 1
        detail = ""
        if record.exc_info and record.exc_info[1] is not None:
            text = str(record.exc_info[1])
            marker = "input_value="
            detail = text[text.find(marker) + len(marker):].split(", input_type")[0][:200] if marker in text else ""
        conn.note(f"ignored a line on stdout that is not an MCP message: {detail}")
        return False


_filter_installed = False


def _install_filter() -> None:
    global _filter_installed
    if not _filter_installed:
        logging.getLogger("mcp.client.stdio").addFilter(_JunkFilter())
        _filter_installed = True


def _devnull() -> TextIO:
    return open(os.devnull, "w", encoding="utf-8")


class Connection:
    """A connected `mcp.Client` for one server. Create, then `await open(timeout)`."""

    def __init__(self, target: Target) -> None:
        self.target = target
        self.client: Any = None
        self.junk_lines = 0
        self._errlog: TextIO | None = None
        self._stop = asyncio.Event()
        self._ready: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._task: asyncio.Task[None] | None = None
        self._done = False
        self._stdio_cm: Any = None  # the SDK's stdio transport context manager (to find the child)
        self.listed = False  # tools/list answered on this session (so the SDK never lists inside a call)
        self.channels: list[CallChannel] = []  # tool calls in flight, latest last
        self.resource_watchers: list[Callable[[str], None]] = []  # resources/subscribe (before 2026-07-28)

    # -- log -----------------------------------------------------------------------------
    def note(self, text: str) -> None:
        if self._errlog is not None:
            try:
                text = redact(text, self.target.secrets)
                self._errlog.write(f"[llmspace {datetime.now().isoformat(timespec='seconds')}] {text}\n")
                self._errlog.flush()
            except (OSError, ValueError):
                pass

    def _open_log(self) -> TextIO | None:
        path = self.target.log_path
        if path is None:
            return None
        path.parent.mkdir(parents=True, exist_ok=True)
        # Log files are append-only server output, not app data: plain append is right here.
        return open(path, "a", encoding="utf-8", buffering=1)

    # -- lifecycle -----------------------------------------------------------------------
    @property
    def alive(self) -> bool:
        """Connected and the transport has not closed under us (e.g. the server died)."""
        if self._done or self.client is None:
            return False
        session = getattr(self.client, "_session", None)
        dispatcher = getattr(session, "_dispatcher", None)
        return not getattr(dispatcher, "_closed", False)

    @property
    def closed(self) -> bool:
        """The owner task has ended (closed, failed or cancelled); the connection is unusable."""
        return self._done

    async def open(self, timeout: float) -> Any:
        _install_filter()
        self._task = asyncio.get_running_loop().create_task(self._own(), name=f"mcp-{self.target.server_name}")
        try:
            return await asyncio.wait_for(asyncio.shield(self._ready), timeout)
        except BaseException:
            await self.close()
            raise

    async def _own(self) -> None:
        from mcp import Client
        from mcp_types import Implementation

        _CURRENT.set(self)
        try:
            async with AsyncExitStack() as stack:
                self._errlog = self._open_log()
                if self._errlog is not None:
                    stack.callback(self._errlog.close)
                transport = await self._transport(stack)
                client = Client(transport, cache=None, client_info=Implementation(name="llm-space", version=__version__),
                                elicitation_callback=cast(Any, self._on_elicit), message_handler=self._on_message)
                await stack.enter_async_context(client)
                self.client = client
                if not self._ready.done():
                    self._ready.set_result(client)
                await self._stop.wait()
                self.note("closing the connection")
        except BaseException as exc:
            if not self._ready.done():
                self._ready.set_exception(exc)
            elif not isinstance(exc, asyncio.CancelledError):
                log.info("MCP server %s: connection ended: %s", self.target.name, redact(repr(exc), self.target.secrets))
            if isinstance(exc, (KeyboardInterrupt, SystemExit)):
                raise
        finally:
            self._done = True
            self._errlog = None

    async def _transport(self, stack: AsyncExitStack) -> Any:
        t = self.target
        if t.transport == "stdio":
            from mcp import StdioServerParameters
            from mcp.client.stdio import stdio_client

            self.note(f"starting {t.command} {' '.join(t.args)}".rstrip())
            params = StdioServerParameters(command=t.command, args=t.args, env=t.env, cwd=t.cwd or None)
            errlog = self._errlog
            if errlog is None:  # no log path: the child's stderr is discarded (closed with the stack)
                errlog = stack.enter_context(_devnull())
            self._stdio_cm = stdio_client(params, errlog=errlog)
            return self._stdio_cm
        factory = mcp_http_client(t.name)
        if t.transport == "sse":
            from mcp.client.sse import sse_client

            return sse_client(t.url, headers=t.headers or None, timeout=10.0, httpx_client_factory=factory)
        from mcp.client.streamable_http import streamable_http_client

        http = factory(headers=t.headers or None)
        await stack.enter_async_context(http)
        return streamable_http_client(t.url, http_client=http)

    def _server_process(self) -> Any:
        """The stdio server's process (an anyio `Process`), or None. The SDK keeps it in a local
        of its `stdio_client` generator and offers no accessor, so it is read from that frame;
        if a future SDK renames it, closing falls back to the SDK's own (slower) escalation."""
        gen = getattr(self._stdio_cm, "gen", None)
        frame = getattr(gen, "ag_frame", None)
        process = frame.f_locals.get("process") if frame is not None else None
        return process if hasattr(process, "pid") and hasattr(process, "returncode") else None

    def _signal_server(self, sig: int) -> None:
        process = self._server_process()
        if process is None or process.returncode is not None:
            return
        self.note(f"the server did not exit when asked; sending {signal.Signals(sig).name}")
        try:
            if sys.platform == "win32":  # pragma: no cover - no process groups; a hard kill
                process.kill()
            else:
                os.killpg(process.pid, sig)  # the SDK starts the server in its own session (pgid == pid)
        except (ProcessLookupError, PermissionError, OSError):
            pass

    async def close(self, timeout: float = 8.0, grace: float | None = None) -> None:
        """Exit the client in its owner task (ends a stdio child); cancel it if that hangs.

        `grace`: when given (app exit, Ctrl-C), a stdio server that has not exited `grace`
        seconds after its stdin closed gets SIGTERM, and SIGKILL `grace` seconds later, instead
        of the SDK's 2 s + 2 s escalation."""
        self._stop.set()
        task = self._task
        timers: list[asyncio.TimerHandle] = []
        if grace is not None and self.target.transport == "stdio":
            loop = asyncio.get_running_loop()
            timers = [loop.call_later(grace, self._signal_server, signal.SIGTERM),
                      loop.call_later(2 * grace, self._signal_server, getattr(signal, "SIGKILL", signal.SIGTERM))]
        try:
            if task is not None and not task.done():
                if not self._ready.done():
                    task.cancel()
                try:
                    await asyncio.wait_for(asyncio.shield(task), timeout)
                except (TimeoutError, asyncio.CancelledError, Exception):
                    task.cancel()
                    try:
                        await asyncio.wait_for(task, 3)
                    except BaseException:
                        pass
        finally:
            for timer in timers:
                timer.cancel()
        if self._ready.done() and not self._ready.cancelled():
            self._ready.exception()  # mark as retrieved
        self._done = True

    async def _on_message(self, message: Any) -> None:
        """A server notification: `notifications/resources/updated` goes to the resource watchers."""
        if getattr(message, "method", None) == "notifications/resources/updated":
            uri = str(getattr(getattr(message, "params", None), "uri", ""))
            for watcher in list(self.resource_watchers):
                try:
                    watcher(uri)
                except Exception:
                    log.exception("MCP resource watcher failed")

    # -- elicitation ---------------------------------------------------------------------
    async def _on_elicit(self, _ctx: Any, params: Any) -> Any:
        """The SDK's elicitation callback: find the call it belongs to (the calling task's
        channel — a 2026-07-28 input request runs in it — else, for a request of its own from
        a 2025-era server, the latest call in flight) and let its caller answer."""
        from mcp_types import ElicitResult

        channel = _CHANNEL.get() or (self.channels[-1] if self.channels else None)
        mode: Literal["form", "url"] = "url" if getattr(params, "mode", "form") == "url" else "form"
        request = ElicitationRequest(server=self.target.name, tool=channel.tool if channel else "", mode=mode,
                                     message=str(getattr(params, "message", "") or ""),
                                     schema=dict(getattr(params, "requested_schema", None) or {}),
                                     url=str(getattr(params, "url", "") or ""))
        why = unsupported_schema(request.schema) if mode == "form" else None
        if channel is None:
            answer = Decline("it did not come during a tool call")(request, lambda: False)
        elif why:
            answer = ElicitationAnswer("decline", reason=f"the form cannot be shown: {why}")
        else:
            answer = await channel.ask(request)
        text = note(request, answer)
        self.note(text)
        if channel is not None:
            channel.notes.append(text)
        content = answer.content if answer.action == "accept" and mode == "form" else None
        return ElicitResult(action=answer.action, content=content)

    # -- requests ------------------------------------------------------------------------
    async def list_all(self, method: str, attr: str, timeout: float) -> list[Any]:
        """All pages of tools/prompts/resources within `timeout` seconds."""
        items: list[Any] = []
        cursor: str | None = None
        async with asyncio.timeout(timeout):
            while True:
                page = await getattr(self.client, method)(cursor=cursor)
                items.extend(getattr(page, attr) or [])
                cursor = getattr(page, "next_cursor", None)
                if not cursor:
                    if method == "list_tools":
                        self.listed = True
                    return items

    async def ensure_listed(self, timeout: float) -> None:
        """List the tools once per session, bounded by `timeout`. The SDK validates a tool's
        result against its output schema and lists the tools *inside* `call_tool` when it has
        not seen them, where only the call's own (long) timeout would bound a hung listing."""
        if not self.listed:
            await self.list_all("list_tools", "tools", timeout)

    async def call(self, tool: str, arguments: dict[str, Any], timeout: float,
                   on_progress: Callable[[float, float | None, str | None], None] | None) -> Any:
        async def progress(p: float, total: float | None, message: str | None) -> None:
            if on_progress is not None:
                try:
                    on_progress(p, total, message)
                except Exception:
                    log.exception("MCP progress callback failed")

        channel = _CHANNEL.get()
        if channel is not None:
            self.channels.append(channel)
        try:
            async with asyncio.timeout(timeout):
                return await self.client.call_tool(tool, arguments, progress_callback=progress if on_progress else None)
        finally:
            if channel is not None:
                self.channels.remove(channel)

    def features(self) -> dict[str, Any]:
        """The negotiated protocol revision, the server's name and what it offers."""
        caps = self.client.server_capabilities
        info = self.client.server_info
        offered = [name for name in ("tools", "prompts", "resources", "completions", "logging")
                   if getattr(caps, name, None) is not None]
        resources = getattr(caps, "resources", None)
        if resources is not None and getattr(resources, "subscribe", None):
            offered.append("resources/subscribe")
        return {"protocolVersion": self.client.protocol_version,
                "server": {"name": getattr(info, "name", None), "version": getattr(info, "version", None)},
                "features": offered, "instructions": self.client.instructions}
