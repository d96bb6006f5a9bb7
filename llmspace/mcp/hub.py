"""`McpHub`: the synchronous facade over every configured MCP server.

Its `ConnectionPool` (`mcp/pool.py`) owns one asyncio loop thread (started on first use)
and one cached connection per server. Here: the servers' configuration and how each becomes
a connection target (`$VAR`s, secrets, headers checked), the tool lists and readiness, tool
calls, prompts and resources. Callers on any thread — the tool router, the CLI, the GUI's
workers — use plain blocking methods; never call the slow ones from the Tk thread. `mcp`
is imported only on the loop thread, on first use.

Contract used by `llmspace.tools.router` and `llmspace.commands.mcp`:
  servers(), test(s), list_tools(s, refresh), thread_tools(s), call_tool(s, tool, args,
  timeout, cancel, on_progress, elicit), list_prompts(s), list_resources(s), close();
  trust(s, tool), changed_tools(s) (pinned definitions, `mcp/pins.py`); the prompts,
  completions, resources and features of `mcp/extras.py`; plus add_server / update_server /
  remove_server for the settings UI and the CLI.
Pins: a tool whose definition changed since it was trusted is listed unavailable (so
`thread_tools` leaves it out) and a call of it is refused, naming `llmspace mcp trust`.
`call_tool` raises `UserFacingError` only for configuration problems (unknown or disabled
server, unset `$VAR`); every failure of the server itself becomes an `isError` output.
Servers come from `servers.ServerDirectory`: the user's `settings/mcp.json` and the plugin
servers of the `mcp_servers` registry (read-only; closed when their plugin is disabled).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import dataclasses
import os
import queue
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..cancel import CancelToken
from ..core.model import TextContent, Tool, ToolCallOutput
from ..errors import UserFacingError
from ..paths import DataRoot, safe_component
from ..redact import secret_values
from ..registry import Registry
from ..settings.mcp import McpServerConfig, McpSettings, Readiness, now_iso
from .connection import _CHANNEL, CONNECTION_CLOSED, CallChannel, Target
from .diagnose import describe, leaf
from .elicitation import NOBODY, ElicitationAnswer, Elicitor
from .env import child_env, interpolate_map
from .extras import McpExtras
from .naming import McpToolInfo, build_tool_infos
from .pins import PinStore, ToolDefinition
from .pool import SHUTDOWN_GRACE, ConnectionPool
from .servers import ServerDirectory, is_plugin_server

ProgressFn = Callable[[float, "float | None", "str | None"], None]

# process start + `initialize`: a Python server importing its SDK takes seconds on a busy machine,
# and 10 s failed on a loaded 2-core one
CONNECT_TIMEOUT = 30.0
# tools/prompts/resources listing, bounded apart from the call (override: LLM_SPACE_MCP_LIST_TIMEOUT).
LIST_TIMEOUT = 30.0
CALL_TIMEOUT = 300.0


def _list_timeout_from_env() -> float:
    try:
        value = float(os.environ.get("LLM_SPACE_MCP_LIST_TIMEOUT", ""))
    except ValueError:
        return LIST_TIMEOUT
    return value if value > 0 else LIST_TIMEOUT


def _output(text: str, is_error: bool) -> ToolCallOutput:
    return ToolCallOutput(content=[TextContent(type="text", text=text)], isError=is_error)


def trust_command(server_name: str, tool: str) -> str:
    return f"llmspace mcp trust {server_name} --tool {tool}"


def changed_reason(server_name: str, tool: str) -> str:
    return (f"The MCP tool {tool!r} of server {server_name!r} changed its definition since you trusted it; "
            f"it is not offered or called until you accept the change: `{trust_command(server_name, tool)}`.")


class McpHub:
    """All MCP servers of one data root. Thread-safe; `close()` ends every child process."""

    def __init__(self, root: DataRoot, *, connect_timeout: float = CONNECT_TIMEOUT,
                 list_timeout: float | None = None, servers: Registry[McpServerConfig] | None = None) -> None:
        self.root = root
        self.settings = McpSettings(root)
        self.directory = ServerDirectory(self.settings, servers)
        self.connect_timeout = connect_timeout
        self.list_timeout = float(list_timeout) if list_timeout else _list_timeout_from_env()
        self.pool = ConnectionPool(root.logs / "mcp.log", connect_timeout)
        self.pins = PinStore(root)
        self._lock = threading.Lock()
        self._tools: dict[str, tuple[str, list[McpToolInfo]]] = {}  # id -> (config hash, tools)
        self._unwatch = self.directory.watch(self._drop)  # a withdrawn or changed plugin server
        self.extras = McpExtras(self._request, self._watch, self._list_other)  # prompts, resources, …

    # -- configuration ---------------------------------------------------------------------
    def servers(self) -> list[McpServerConfig]:
        """Configured servers; `readiness` shows `stale` when the config changed since the test."""
        return self.directory.servers()

    def _resolve(self, key: str | McpServerConfig) -> McpServerConfig:
        cfg = self.directory.find(key.id if isinstance(key, McpServerConfig) else str(key))
        if not cfg.is_enabled:
            raise UserFacingError(f"MCP server {cfg.name!r} is disabled.", hint="Enable it in Settings › MCP.")
        return cfg

    def _target(self, cfg: McpServerConfig) -> Target:
        """Resolve `$VAR`s (raises "Environment variable NAME is not set."); plugin servers
        arrive interpolated (llmspace/plugins/package/interpolate.py) and are taken as they are."""
        plugin = is_plugin_server(cfg)
        headers = dict(cfg.headers or {}) if plugin else interpolate_map(cfg.headers)
        configured = dict(cfg.env or {}) if plugin else interpolate_map(cfg.env)
        env = ({**child_env(None), **configured} if plugin else child_env(cfg.env)) if cfg.transport == "stdio" else {}
        secrets = [v for v in list(headers.values()) + list(configured.values()) + list((cfg.headers or {}).values())
                   + list((cfg.env or {}).values()) if v and len(v) >= 4]
        secrets += sorted(secret_values(None, headers, cfg.url))  # URL password/token, header parts, Basic pair
        for hname, hvalue in headers.items():  # httpx sends header names and values as ASCII only
            bad = next((ch for ch in f"{hname}{hvalue}" if ord(ch) > 0x7F or ch in "\r\n\0"), None)
            if bad is not None:
                raise UserFacingError(f"MCP server {cfg.name!r}, header {hname!r}: {bad!r} cannot be sent in an HTTP header "
                                      "(only ASCII characters, no line breaks).",
                                      hint="Change the header in Settings › MCP (or settings/mcp.json).")
        return Target(server_id=cfg.id, name=cfg.name, server_name=cfg.serverName, transport=cfg.transport,
                      config_hash=cfg.config_hash(), command=cfg.command or "", args=list(cfg.args or []),
                      cwd=cfg.cwd, env=env, url=cfg.url or "", headers=headers, secrets=secrets,
                      log_path=self.log_path(cfg))

    def log_path(self, cfg: McpServerConfig) -> Path:
        """`logs/mcp-<serverName>.log`, the name encoded into one path component (`paths.safe_component`):
        `serverName` comes from `settings/mcp.json` unchecked, so `a/../../x` must not climb out."""
        return self.root.logs / f"mcp-{safe_component(cfg.serverName or 'server')}.log"

    def add_server(self, **fields: Any) -> McpServerConfig:
        return self.settings.add(fields)

    def update_server(self, key: str, **changes: Any) -> McpServerConfig:
        """Edit a server: its connection is closed and its tools become stale."""
        self.directory.refuse_change(key)
        cfg = self.settings.update(key, **changes)
        self._drop(cfg.id)
        return cfg

    def remove_server(self, key: str) -> McpServerConfig:
        self.directory.refuse_change(key)
        cfg = self.settings.remove(key)
        self._drop(cfg.id)
        return cfg

    def _drop(self, server_id: str) -> None:
        """Forget the server's tools and close its connection (its configuration changed)."""
        with self._lock:
            self._tools.pop(server_id, None)
        self.pool.drop(server_id)

    # -- tools -------------------------------------------------------------------------------
    async def _list_tools_async(self, target: Target) -> list[McpToolInfo]:
        conn = await self.pool.connection(target)
        try:
            tools = await conn.list_all("list_tools", "tools", self.list_timeout)
        except asyncio.CancelledError:  # close() cancels requests; it closes the connections itself
            raise
        except BaseException as exc:
            await self.pool.close_connection(target.server_id)
            raise UserFacingError(describe(exc, target, phase="tools/list", timeout=self.list_timeout)) from None
        triples = [(t.name, t.description, t.input_schema) for t in tools]
        return build_tool_infos(target.server_id, target.server_name, triples)

    def _fetch_tools(self, cfg: McpServerConfig) -> list[McpToolInfo]:
        """Connect and list tools; persist the readiness either way."""
        previous = cfg.readiness or Readiness()
        try:
            target = self._target(cfg)
            infos = self.pool.run(self._list_tools_async(target), self.connect_timeout + self.list_timeout + 15)
        except (UserFacingError, TimeoutError) as exc:
            message = str(exc) if isinstance(exc, UserFacingError) else f"MCP server {cfg.name!r} did not answer."
            self._drop(cfg.id)
            self.directory.set_readiness(cfg, Readiness(
                status="error", testedAt=now_iso(), toolCount=previous.toolCount, lastError=message,
                tools=previous.tools, configHash=cfg.config_hash()))
            raise UserFacingError(message) from None
        infos = self._check_pins(cfg, infos)
        with self._lock:
            self._tools[cfg.id] = (cfg.config_hash(), infos)
        self.directory.set_readiness(cfg, Readiness(
            status="ready", testedAt=now_iso(), toolCount=len(infos), tools=[i.summary() for i in infos],
            configHash=cfg.config_hash()))
        return infos

    def _check_pins(self, cfg: McpServerConfig, infos: list[McpToolInfo]) -> list[McpToolInfo]:
        """Compare with `settings/mcp-pins.json`: a changed tool becomes unavailable."""
        status = self.pins.check(cfg.id, [ToolDefinition(i.name, i.description, i.inputSchema) for i in infos])
        out = []
        for info in infos:
            pin = status.get(info.name, "pinned")
            if pin == "changed":
                info = dataclasses.replace(info, available=False, reason=changed_reason(cfg.serverName, info.name))
            out.append(dataclasses.replace(info, pin=pin))
        return out

    def changed_tools(self, server: str) -> list[tuple[McpToolInfo, str]]:
        """The server's tools whose definition changed since trusted, each with its diff (lists the tools)."""
        cfg = self._resolve(server)
        return [(i, self.pins.diff(cfg.id, ToolDefinition(i.name, i.description, i.inputSchema)))
                for i in self.list_tools(server, refresh=True) if i.pin == "changed"]

    def trust(self, server: str, tool: str | None = None) -> list[str]:
        """Accept the current definition of `tool` (else of every changed tool); returns the names."""
        cfg = self._resolve(server)
        changed = [i for i, _d in self.changed_tools(server)]
        if tool is not None:
            changed = [i for i in changed if tool in (i.name, i.directName)]
        self.pins.trust(cfg.id, [ToolDefinition(i.name, i.description, i.inputSchema) for i in changed])
        self._drop_tools(cfg.id)
        return [i.name for i in changed]

    def blocked_tool(self, server: str, tool_name: str) -> str | None:
        """Why a thread's MCP tool must not be offered (changed since trusted), or None (also
        when the server cannot be listed now: its call then reports that)."""
        try:
            cfg = self._resolve(server)
            infos = self.list_tools(cfg.id)
        except UserFacingError:
            return None
        for info in infos:
            if tool_name in (info.name, info.directName) and info.pin == "changed":
                return changed_reason(cfg.serverName, info.name)
        return None

    def _drop_tools(self, server_id: str) -> None:
        with self._lock:
            self._tools.pop(server_id, None)

    def test(self, server: str) -> Readiness:
        """Connect and list tools; the result is persisted as the server's readiness."""
        cfg = self._resolve(server)
        try:
            self._fetch_tools(cfg)
        except UserFacingError:
            pass
        return self.directory.readiness_of(cfg)

    def list_tools(self, server: str, refresh: bool = False) -> list[McpToolInfo]:
        """The server's tools (cached until `refresh` or a configuration change)."""
        cfg = self._resolve(server)
        with self._lock:
            cached = self._tools.get(cfg.id)
        if cached is not None and not refresh and cached[0] == cfg.config_hash():
            return list(cached[1])
        return self._fetch_tools(cfg)

    def thread_tools(self, server: str) -> list[Tool]:
        """The server's available tools as Thread tool definitions (`type: "mcp"`)."""
        out = []
        for info in self.list_tools(server):
            if not info.available:
                continue
            data: dict[str, Any] = {"type": "mcp", "name": info.directName}
            if info.description:
                data["description"] = info.description
            data.update(parameters=info.inputSchema, serverId=info.serverId, serverName=info.serverName,
                        toolName=info.name)
            out.append(Tool.model_validate(data))
        return out

    # -- calls -------------------------------------------------------------------------------
    def _raw_tool_name(self, cfg: McpServerConfig, tool_name: str) -> str:
        """The raw MCP name; raises `UserFacingError` for a tool changed since trusted (pins)."""
        infos = self.list_tools(cfg.id)  # cached; a failure (e.g. tools/list timed out) is the call's error
        for info in infos:
            if tool_name in (info.directName, info.name):
                if info.pin == "changed":
                    raise UserFacingError(changed_reason(cfg.serverName, info.name))
                return info.name
        return tool_name

    async def _call_async(self, target: Target, tool: str, arguments: dict[str, Any], timeout: float,
                          on_progress: ProgressFn | None, channel: CallChannel | None = None) -> ToolCallOutput:
        if channel is None:
            return await self._call_unnoted(target, tool, arguments, timeout, on_progress)
        token = _CHANNEL.set(channel)
        try:
            out = await self._call_unnoted(target, tool, arguments, timeout, on_progress)
        finally:
            _CHANNEL.reset(token)
        if channel.notes:  # that the server asked and what became of it; never the answers
            out.content.append(TextContent(type="text", text="\n".join(channel.notes)))
        return out

    async def _call_unnoted(self, target: Target, tool: str, arguments: dict[str, Any], timeout: float,
                            on_progress: ProgressFn | None) -> ToolCallOutput:
        from .flatten import flatten_result

        try:
            conn = await self.pool.connection(target)
        except UserFacingError as exc:
            return _output(str(exc), True)
        try:
            await conn.ensure_listed(self.list_timeout)
        except asyncio.CancelledError:
            raise
        except BaseException as exc:
            await self.pool.close_connection(target.server_id)
            return _output(describe(exc, target, phase="tools/list", timeout=self.list_timeout), True)
        try:
            result = await conn.call(tool, arguments, timeout, on_progress)
        except asyncio.CancelledError:
            raise
        except BaseException as exc:
            e = leaf(exc)
            if isinstance(e, (asyncio.TimeoutError, TimeoutError)):
                return _output(f"MCP tool {tool!r} on server {target.name!r} did not finish within {timeout:g} s.", True)
            if getattr(e, "code", None) == CONNECTION_CLOSED or not conn.alive:
                await self.pool.close_connection(target.server_id)
                return _output(describe(e, target, phase=f"the call to {tool!r}"), True)
            code = getattr(e, "code", None)
            if code is not None and type(e).__name__ == "MCPError":
                return _output(describe(UserFacingError(f"MCP server {target.name!r} returned error {code}: {e}"),
                                        target, phase="call"), True)
            return _output(describe(e, target, phase=f"the call to {tool!r}"), True)
        text, is_error = flatten_result(result)
        return _output(text, is_error)

    def call_tool(self, server: str, tool_name: str, arguments: dict[str, Any] | None = None,
                  timeout: float | None = None, cancel: CancelToken | threading.Event | None = None,
                  on_progress: ProgressFn | None = None, elicit: Elicitor | None = None) -> ToolCallOutput:
        """Call one tool and wait for its flattened result.

        `tool_name` is the raw MCP name (or the exposed `mcp__server__tool` name).
        `timeout` defaults to the server's `timeoutSeconds`, else 5 minutes. `cancel` may be a
        `CancelToken` or a `threading.Event` (polled every 50 ms). `on_progress(progress, total, message)` runs on the MCP loop thread.
        `elicit` answers the server's requests for input during the call, on this thread
        (default: declined, with a note in the result; `mcp/elicitation.py`).
        """
        cfg = self._resolve(server)
        target = self._target(cfg)
        limit = float(timeout or cfg.timeoutSeconds or CALL_TIMEOUT)
        try:
            raw = self._raw_tool_name(cfg, tool_name)
        except UserFacingError as exc:
            return _output(str(exc), True)
        channel = self.pool.run(_new_channel(raw), 15)
        fut = self.pool.submit(self._call_async(target, raw, dict(arguments or {}), limit, on_progress, channel))
        fut.add_done_callback(lambda _f: channel.inbox.put(None))
        is_set: Callable[[], bool] | None = None
        if isinstance(cancel, CancelToken):
            cancel.on_cancel(fut.cancel)
        elif cancel is not None:
            is_set = cancel.is_set
        answerer = elicit or NOBODY

        def stopped() -> bool:
            return fut.done() or (is_set is not None and is_set()) or (isinstance(cancel, CancelToken) and cancel.cancelled)

        deadline = time.monotonic() + limit + self.connect_timeout + self.list_timeout + 15
        while True:
            try:
                item = channel.inbox.get(timeout=0.05 if is_set else max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                if is_set is not None and is_set():
                    fut.cancel()
                elif time.monotonic() >= deadline:
                    fut.cancel()
                    return _output(f"MCP tool {raw!r} on server {cfg.name!r} did not finish within {limit:g} s.", True)
                continue
            if item is None:
                try:
                    return fut.result(0)
                except concurrent.futures.CancelledError:
                    return _output(f"The call to MCP tool {raw!r} was cancelled.", True)
            request, reply = item
            try:
                answer = answerer(request, stopped)
            except Exception as exc:  # a broken form must not hang the call
                answer = ElicitationAnswer("cancel", reason=f"the form failed ({type(exc).__name__}: {exc})")
            if stopped():  # the run was stopped while the user was asked: the call is cancelled, not answered
                fut.cancel()
                continue
            channel.answer(reply, answer)

    # -- prompts and resources ---------------------------------------------------------------
    async def _list_async(self, target: Target, method: str, attr: str) -> list[dict[str, Any]]:
        conn = await self.pool.connection(target)
        try:
            items = await conn.list_all(method, attr, self.list_timeout)
        except asyncio.CancelledError:  # close() cancels requests; it closes the connections itself
            raise
        except BaseException as exc:
            await self.pool.close_connection(target.server_id)
            phase = method.replace("list_", "") + "/list"
            raise UserFacingError(describe(exc, target, phase=phase, timeout=self.list_timeout)) from None
        return [i.model_dump(mode="json", by_alias=True, exclude_none=True) for i in items]

    def _list_other(self, server: str, method: str, attr: str) -> list[dict[str, Any]]:
        cfg = self._resolve(server)
        target = self._target(cfg)
        try:
            result: list[dict[str, Any]] = self.pool.run(self._list_async(target, method, attr),
                                                     self.connect_timeout + self.list_timeout + 15)
            return result
        except TimeoutError:
            raise UserFacingError(f"MCP server {cfg.name!r} did not answer.") from None

    def list_prompts(self, server: str) -> list[dict[str, Any]]:
        """The server's prompts as JSON dicts (`name`, `description`, `arguments`, …)."""
        return self._list_other(server, "list_prompts", "prompts")

    def list_resources(self, server: str) -> list[dict[str, Any]]:
        """The server's resources as JSON dicts (`uri`, `name`, `mimeType`, …)."""
        return self._list_other(server, "list_resources", "resources")

    def _request(self, server: str, make: Callable[[Any], Any], phase: str) -> Any:
        """Run `await make(client)` on the server's connection (for `McpExtras`), bounded like a listing."""
        cfg = self._resolve(server)
        target = self._target(cfg)

        async def go() -> Any:
            conn = await self.pool.connection(target)
            try:
                async with asyncio.timeout(self.list_timeout):
                    return await make(conn)
            except asyncio.CancelledError:
                raise
            except BaseException as exc:
                if not conn.alive:
                    await self.pool.close_connection(target.server_id)
                raise UserFacingError(describe(exc, target, phase=phase, timeout=self.list_timeout)) from None

        try:
            return self.pool.run(go(), self.connect_timeout + self.list_timeout + 15)
        except TimeoutError:
            raise UserFacingError(f"MCP server {cfg.name!r} did not answer.") from None

    def _watch(self, server: str, make: Callable[[Any], Any], ready: concurrent.futures.Future[None]) -> Any:
        """Start `await make(conn)` as a long-lived request; wait until it sets `ready`."""
        cfg = self._resolve(server)
        target = self._target(cfg)

        async def go() -> None:
            conn = await self.pool.connection(target)
            try:
                await make(conn)
            except BaseException as exc:
                if not ready.done():
                    ready.set_exception(UserFacingError(describe(exc, target, phase="resource subscription")))
                raise

        fut = self.pool.submit(go())
        try:
            ready.result(self.connect_timeout + self.list_timeout)
        except concurrent.futures.TimeoutError:
            fut.cancel()
            raise UserFacingError(f"MCP server {cfg.name!r} did not answer the subscription.") from None
        return fut

    # -- shutdown ----------------------------------------------------------------------------
    def close(self, grace: float = SHUTDOWN_GRACE) -> None:
        """Cancel every request in flight, close every connection (ending stdio children
        within about `2 * grace` seconds, see `pool.SHUTDOWN_GRACE`) and stop the loop thread."""
        with self._lock:
            self._tools.clear()
        self._unwatch()
        self.pool.close(grace)


async def _new_channel(tool: str) -> CallChannel:
    return CallChannel(tool)
