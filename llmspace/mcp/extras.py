"""`McpExtras`: what an MCP server offers besides tools, as blocking calls (`McpHub.extras`;
presenter-free: the CLI and the app's dialogs call them, never from the Tk thread).

  get_prompt(s, name, arguments)            -> the `prompts/get` result as JSON
  complete(s, kind, ref, argument, prefix)  -> `completion/complete` values ("prompt"/"resource")
  list_resource_templates(s)                -> templates as JSON
  read_resource(s, uri)                     -> the `resources/read` contents as JSON
  features(s)                               -> protocol revision (2025-11-25 with initialize, or
                                               2026-07-28, stateless), server and capabilities

A prompt or resource is someone else's text: `mcp/content.py` turns the results into thread
messages and parts marked literal. Each request is bounded like a listing (`list_timeout`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from .connection import Connection


def _dump(value: Any) -> dict[str, Any]:
    dumped: dict[str, Any] = value.model_dump(mode="json", by_alias=True, exclude_none=True)
    return dumped


class McpExtras:
    """Built by `McpHub` with its three ways to reach a server: `request(server, make, phase)`
    runs one request on a connection, `watch(server, make, ready)` keeps one running, and
    `list_other(server, method, attr)` lists what is not tools."""

    def __init__(self, request: Callable[..., Any], watch: Callable[..., Any],
                 list_other: Callable[..., list[dict[str, Any]]]) -> None:
        self._request = request
        self._watch = watch
        self._list_other = list_other

    def list_resource_templates(self, server: str) -> list[dict[str, Any]]:
        """The server's resource templates as JSON dicts (`uriTemplate`, `name`, `mimeType`, …)."""
        return self._list_other(server, "list_resource_templates", "resource_templates")

    def get_prompt(self, server: str, name: str, arguments: dict[str, str] | None = None) -> dict[str, Any]:
        """`prompts/get`: `{"description"?, "messages": [{"role", "content"}, …]}`."""
        async def get(conn: Connection) -> dict[str, Any]:
            return _dump(await conn.client.get_prompt(name, dict(arguments or {})))

        result: dict[str, Any] = self._request(server, get, f"prompts/get {name!r}")
        return result

    def complete(self, server: str, kind: Literal["prompt", "resource"], ref: str, argument: str, prefix: str,
                 context: dict[str, str] | None = None) -> list[str]:
        """Completions of `argument` starting with `prefix`, for a prompt (`ref` its name) or a
        resource template (`ref` its URI template)."""
        async def get(conn: Connection) -> list[str]:
            from mcp_types import PromptReference, ResourceTemplateReference

            reference = PromptReference(name=ref) if kind == "prompt" else ResourceTemplateReference(uri=ref)
            result = await conn.client.complete(reference, {"name": argument, "value": prefix},
                                                context_arguments=context or None)
            return [str(v) for v in result.completion.values]

        values: list[str] = self._request(server, get, "completion/complete")
        return values

    def read_resource(self, server: str, uri: str) -> list[dict[str, Any]]:
        """`resources/read`: contents as JSON (`uri`, `mimeType`, and `text` or `blob`)."""
        async def get(conn: Connection) -> list[dict[str, Any]]:
            result = await conn.client.read_resource(uri)
            return [_dump(c) for c in result.contents]

        contents: list[dict[str, Any]] = self._request(server, get, f"resources/read {uri!r}")
        return contents

    def watch_resources(self, server: str, uris: list[str], on_changed: Callable[[str], None]) -> Callable[[], None]:
        """Call `on_changed(uri)` (on the MCP loop thread) whenever the server says one of `uris`
        changed: `subscriptions/listen` in 2026-07-28, `resources/subscribe` before. Returns
        `stop()`; closing the hub stops it too. Raises `UserFacingError` when the server cannot."""
        import asyncio
        import concurrent.futures
        import warnings

        ready: concurrent.futures.Future[None] = concurrent.futures.Future()

        async def watch(conn: Connection) -> None:
            if conn.client.protocol_version >= "2026-07-28":
                async with conn.client.listen(resource_subscriptions=list(uris)) as sub:
                    ready.set_result(None)
                    async for event in sub:
                        uri = getattr(event, "uri", None)
                        if isinstance(uri, str):
                            on_changed(uri)
                return
            conn.resource_watchers.append(on_changed)
            try:
                for uri in uris:
                    with warnings.catch_warnings():  # deliberate: the way to subscribe before 2026-07-28
                        warnings.simplefilter("ignore")  # MCPDeprecationWarning is a UserWarning
                        await conn.client.session.subscribe_resource(uri)
                ready.set_result(None)
                await asyncio.Event().wait()
            finally:
                conn.resource_watchers.remove(on_changed)

        fut = self._watch(server, watch, ready)
        return lambda: fut.cancel() and None

    def features(self, server: str) -> dict[str, Any]:
        """`{"protocolVersion", "server": {name, version}, "features": [...], "instructions"}`."""
        async def get(conn: Connection) -> dict[str, Any]:
            return conn.features()

        info: dict[str, Any] = self._request(server, get, "connect")
        return info
