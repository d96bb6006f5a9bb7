"""Inserting an MCP server's prompt and attaching its resources in the editor, without Tk.

- Servers: the enabled MCP servers, by name.
- Prompts: a server's prompts with their arguments; completions of an argument as the user
  types (`completion/complete`, the other arguments as context); the prompt's messages
  (user and assistant, text and images) inserted at the end of the thread, marked literal
  (`mcp/content.py`: sent as written, never rendered as a template) and naming the server
  (`mcpServer`, a key of ours the original app ignores) so the editor can say where they came
  from. One undo step.
- Resources: a server's resources and resource templates; a template's variables, their
  completions, and the URI they make; a resource read and attached to a user message as the
  core does (text and `text/*` blobs as text naming the URI, images as image parts; other
  binary types and anything over 10 MB refused with a `UserFacingError` saying why); an
  attached text resource the server says changed is refreshed in place (`refresh`).

The methods that reach the server block: call them from a worker thread. `insert` and
`attach` change the thread: call them on the UI thread.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from ..errors import UserFacingError
from ..mcp import content
from .editor import EditorPresenter
from .view_updates import MessagesChanged

SERVER_KEY = "mcpServer"  # on a message made from a server's prompt or resource: the server's name
_VARIABLE = re.compile(r"\{([+#./;?&]?)([A-Za-z0-9_.,%]+)\}")


@dataclass(frozen=True)
class PromptArgument:
    name: str
    description: str
    required: bool


@dataclass(frozen=True)
class PromptInfo:
    name: str
    title: str
    description: str
    arguments: tuple[PromptArgument, ...]

    @property
    def shown(self) -> str:
        head = self.title or self.name
        return f"{head} — {self.description}" if self.description else head


@dataclass(frozen=True)
class ResourceItem:
    """A resource (`uri`) or a resource template (`template`)."""

    name: str
    uri: str = ""
    template: str = ""
    mime: str = ""

    @property
    def shown(self) -> str:
        where = self.template or self.uri
        kind = " (template)" if self.template else ""
        return f"{self.name} — {where}{kind}" + (f" [{self.mime}]" if self.mime else "")

    def variables(self) -> list[str]:
        """The names a template needs (`{name}`, `{+path}`, `{?a,b}` …)."""
        out: list[str] = []
        for _op, names in _VARIABLE.findall(self.template):
            out += [n for n in names.split(",") if n and n not in out]
        return out

    def expand(self, values: dict[str, str]) -> str:
        """The URI of a template with `values` (simple RFC 6570 expansion), or the resource's URI."""
        if not self.template:
            return self.uri
        missing = [n for n in self.variables() if not values.get(n, "").strip()]
        if missing:
            raise UserFacingError(f"Fill in {', '.join(missing)} to read this resource.")

        def one(m: re.Match[str]) -> str:
            op, names = m.group(1), [n for n in m.group(2).split(",") if n]
            safe = "/:" if op in "+#" else ""
            parts = [quote(values[n].strip(), safe=safe) for n in names]
            if op == "?":
                return "?" + "&".join(f"{n}={p}" for n, p in zip(names, parts, strict=True))
            return {"#": "#", ".": ".", "/": "/", ";": ";"}.get(op, "") + ",".join(parts)

        return _VARIABLE.sub(one, self.template)


class McpContentPresenter:
    def __init__(self, hub: Any, editor: EditorPresenter) -> None:
        self.hub = hub
        self.editor = editor

    def servers(self) -> list[tuple[str, str]]:
        """(id, name) of each enabled server."""
        return [(s.id, s.name) for s in self.hub.servers() if s.is_enabled]

    # -- prompts -----------------------------------------------------------------------------
    def prompts(self, server_id: str) -> list[PromptInfo]:
        out = []
        for p in self.hub.list_prompts(server_id):
            args = tuple(PromptArgument(str(a.get("name", "")), str(a.get("description") or ""), bool(a.get("required")))
                         for a in p.get("arguments") or [] if isinstance(a, dict))
            out.append(PromptInfo(str(p.get("name", "")), str(p.get("title") or ""), str(p.get("description") or ""), args))
        return out

    def complete_prompt(self, server_id: str, prompt: str, argument: str, prefix: str,
                        others: dict[str, str] | None = None) -> list[str]:
        context = {k: v for k, v in (others or {}).items() if k != argument and v}
        values: list[str] = self.hub.extras.complete(server_id, "prompt", prompt, argument, prefix, context)
        return values

    def prompt_messages(self, server_id: str, prompt: PromptInfo, values: dict[str, str]) -> list[dict[str, Any]]:
        """The prompt's messages as thread messages (blocking); refuses a missing required argument."""
        missing = [a.name for a in prompt.arguments if a.required and not values.get(a.name, "").strip()]
        if missing:
            raise UserFacingError(f"The prompt {prompt.name!r} needs {', '.join(missing)}.",
                                  hint="Fill in the arguments marked *.")
        given = {k: v for k, v in values.items() if v.strip()}
        messages = content.prompt_messages(self.hub.extras.get_prompt(server_id, prompt.name, given))
        if not messages:
            raise UserFacingError(f"The prompt {prompt.name!r} returned no messages.")
        name = self._name(server_id)
        return [{**m, SERVER_KEY: name} for m in messages]

    def insert(self, messages: list[dict[str, Any]]) -> list[str]:
        """Append the messages to the thread (one undo step); their ids."""
        self.editor.checkpoint(None)
        content.insert_messages(self.editor.thread, messages)
        self.editor.edited(MessagesChanged())
        return [str(m["id"]) for m in messages]

    # -- resources ---------------------------------------------------------------------------
    def resources(self, server_id: str) -> list[ResourceItem]:
        """The server's resources, then its templates (a server without templates lists none)."""
        items = [ResourceItem(str(r.get("name") or r.get("uri")), uri=str(r.get("uri", "")), mime=str(r.get("mimeType") or ""))
                 for r in self.hub.list_resources(server_id)]
        try:
            templates = self.hub.extras.list_resource_templates(server_id)
        except UserFacingError:
            templates = []
        items += [ResourceItem(str(t.get("name") or t.get("uriTemplate")), template=str(t.get("uriTemplate", "")),
                               mime=str(t.get("mimeType") or "")) for t in templates]
        return items

    def complete_template(self, server_id: str, item: ResourceItem, variable: str, prefix: str,
                          others: dict[str, str] | None = None) -> list[str]:
        context = {k: v for k, v in (others or {}).items() if k != variable and v}
        values: list[str] = self.hub.extras.complete(server_id, "resource", item.template, variable, prefix, context)
        return values

    def read_parts(self, server_id: str, uri: str) -> list[dict[str, Any]]:
        """The resource as message parts (blocking); refusals raise `UserFacingError`."""
        return content.resource_parts(self.hub.extras.read_resource(server_id, uri))

    def attach(self, message_id: str, parts: list[dict[str, Any]], server_id: str) -> None:
        """Attach the parts to the user message (one undo step); the message becomes literal."""
        self.editor.checkpoint(None)
        content.attach(self.editor.thread, message_id, parts)
        msg = self.editor.thread.messages[self.editor.index_of(message_id)]
        extra = getattr(msg, "__pydantic_extra__", None)
        if isinstance(extra, dict):
            extra[SERVER_KEY] = self._name(server_id)
        self.editor.edited(MessagesChanged())

    def refresh(self, message_id: str, uri: str, parts: list[dict[str, Any]]) -> bool:
        """Put the resource's new text in place of the part naming `uri` (one undo step); False
        when the message no longer holds it."""
        head = f"[resource: {uri}]\n"
        try:
            msg = self.editor.thread.messages[self.editor.index_of(message_id)]
        except UserFacingError:
            return False
        at = next((i for i, p in enumerate(msg.content) if getattr(p, "type", "") == "text"
                   and str(getattr(p, "text", "")).startswith(head)), None)
        if at is None:
            return False
        self.editor.checkpoint(None)
        data = msg.model_dump(mode="json", by_alias=True, exclude_unset=True)
        data["content"] = [*data["content"][:at], *parts, *data["content"][at + 1:]]
        messages = self.editor.thread.ensure_messages()
        messages[self.editor.index_of(message_id)] = type(msg).model_validate(data)
        self.editor.edited(MessagesChanged())
        return True

    def _name(self, server_id: str) -> str:
        return next((name for sid, name in self.servers() if sid == server_id), server_id)


def from_server(msg: Any) -> str | None:
    """The note a card shows on a message made from an MCP server's prompt or resource, else None."""
    extra = getattr(msg, "__pydantic_extra__", None) or {}
    name = extra.get(SERVER_KEY)
    if isinstance(name, str) and extra.get(content.LITERAL) is True:
        return f"From MCP server {name!r}: sent as written, never rendered as a template"
    return None
