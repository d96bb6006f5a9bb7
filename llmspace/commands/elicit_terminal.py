"""Answering an MCP server's request for input on a terminal (`llmspace run`, `mcp call`).

`elicitor(no_input)` gives the command's `Elicitor` (`mcp/elicitation.py`): a terminal one
when standard input is a terminal and `--no-input` was not given, else one that declines,
saying why (the note lands in the tool result). The terminal one shows the server's message,
asks Answer/Decline/Cancel, then each field of the form (titled enums by value or title,
multi-select as a comma list, formats and bounds checked, asked again when wrong); a URL
request shows the full origin and opens the browser only after a "y". Questions go to stderr;
reading stops when the run is cancelled (Ctrl-C), which cancels the request.
"""

from __future__ import annotations

import select
import sys
import webbrowser
from collections.abc import Callable
from typing import Any, TextIO

from ..mcp.elicitation import Decline, ElicitationAnswer, ElicitationRequest, Elicitor, choices, convert


def elicitor(no_input: bool) -> Elicitor:
    if no_input:
        return Decline("--no-input was given")
    if not sys.stdin.isatty():
        return Decline("standard input is not a terminal (run it on one to answer)")
    return TerminalElicitor(sys.stdin, sys.stderr)


class TerminalElicitor:
    """Asks on `stdin`/`out` (see the module docstring)."""

    def __init__(self, stdin: TextIO, out: TextIO, opener: Callable[[str], Any] = webbrowser.open) -> None:
        self.stdin = stdin
        self.out = out
        self.opener = opener

    def _readline(self, prompt: str, cancelled: Callable[[], bool]) -> str | None:
        """A line, or None at end of input or when the run is cancelled."""
        self.out.write(prompt)
        self.out.flush()
        try:
            fd = self.stdin.fileno()
        except (AttributeError, OSError, ValueError):
            fd = -1
        while fd >= 0 and sys.platform != "win32":
            if cancelled():
                return None
            ready, _w, _x = select.select([fd], [], [], 0.1)
            if ready:
                break
        line = self.stdin.readline()
        return None if not line or cancelled() else line.rstrip("\r\n")

    def __call__(self, request: ElicitationRequest, cancelled: Callable[[], bool]) -> ElicitationAnswer:
        where = f" (tool {request.tool})" if request.tool else ""
        self.out.write(f"\nMCP server {request.server!r}{where} asks: {request.message}\n")
        if request.mode == "url":
            self.out.write(f"It wants to open {request.url}\n  in your browser (site: {request.origin}).\n")
            reply = self._readline("Open it? [y]es / [n]o (decline) / [c]ancel: ", cancelled)
            if reply is None or reply.strip().lower() in ("c", "cancel"):
                return ElicitationAnswer("cancel")
            if reply.strip().lower() not in ("y", "yes"):
                return ElicitationAnswer("decline")
            self.opener(request.url)
            return ElicitationAnswer("accept")
        reply = self._readline("Answer? [y]es / [n]o (decline) / [c]ancel: ", cancelled)
        if reply is None or reply.strip().lower() in ("c", "cancel"):
            return ElicitationAnswer("cancel")
        if reply.strip().lower() not in ("y", "yes"):
            return ElicitationAnswer("decline")
        content: dict[str, Any] = {}
        required = set(request.schema.get("required") or [])
        for name, prop in (request.schema.get("properties") or {}).items():
            value = self._field(name, prop, name in required, cancelled)
            if value is _CANCEL:
                return ElicitationAnswer("cancel")
            if value is not None:
                content[name] = value
        return ElicitationAnswer("accept", content)

    def _field(self, name: str, prop: dict[str, Any], required: bool, cancelled: Callable[[], bool]) -> Any:
        label = str(prop.get("title") or name)
        options = choices(prop)
        hint = f" ({', '.join(v if v == t else f'{v}={t}' for v, t in options)})" if options else ""
        if prop.get("type") == "array":
            hint += " [comma-separated]"
        elif prop.get("format"):
            hint += f" [{prop['format']}]"
        elif prop.get("type") == "boolean":
            hint += " [y/n]"
        if prop.get("description") and prop.get("description") != label:
            self.out.write(f"  {prop['description']}\n")
        while True:
            default = f" [default: {prop['default']}]" if "default" in prop else ""
            text = self._readline(f"{label}{hint}{default}{'' if required else ' (optional)'}: ", cancelled)
            if text is None:
                return _CANCEL
            if not text.strip() and "default" in prop:
                return prop["default"]
            if not text.strip() and not required:
                return None
            titles = {t: v for v, t in options}
            text = titles.get(text.strip(), text)
            try:
                return convert(prop, text)
            except ValueError as exc:
                self.out.write(f"  {exc}\n")


_CANCEL = object()
