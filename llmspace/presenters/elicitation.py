"""The app's MCP elicitation form, without Tk: a server's request for input during a tool
call (`mcp.elicitation.ElicitationRequest`) as form fields, and the answer built from what
the user entered.

A form request becomes `FormField`s through the plugin settings form's generator
(`plugins/settings_form.build_form`: titled enums, multi-select arrays, format, minimum and
maximum); Accept checks every field with the MCP rules (`mcp.elicitation.convert`) and
returns either the content or a message per field. A URL-mode request shows the full URL
and its origin; the browser opens only after the user chose to open it. Decline and Cancel
answer without content.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..mcp.elicitation import ElicitationAnswer, ElicitationRequest, convert, unsupported_schema
from ..plugins.errors import PluginError
from ..plugins.settings_form import FormField, build_form


@dataclass
class ElicitationForm:
    """One request and the values entered so far (field key -> value as the widgets give it)."""

    request: ElicitationRequest
    values: dict[str, Any] = field(default_factory=dict)

    @property
    def title(self) -> str:
        where = f", tool {self.request.tool}" if self.request.tool else ""
        return f"MCP server {self.request.server!r}{where} asks"

    @property
    def url_text(self) -> str:
        """What a URL-mode request shows before anything opens: the full URL and its site."""
        return f"It wants to open this page in your browser:\n{self.request.url}\nSite: {self.request.origin}"

    def fields(self) -> list[FormField]:
        """The form's fields (a URL request has none); raises ValueError for a schema the form
        cannot show (the hub declines those before asking, so this is a second guard)."""
        if self.request.mode != "form":
            return []
        problem = unsupported_schema(self.request.schema)
        if problem:
            raise ValueError(problem)
        try:
            form = build_form({"type": "object", **self.request.schema})
        except PluginError as exc:
            raise ValueError(str(exc)) from None
        for f in form.fields:
            if f.has_default and f.key not in self.values:
                self.values[f.key] = f.default
        return list(form.fields)

    def set(self, key: str, value: Any) -> None:
        self.values[key] = value

    def accept(self) -> tuple[ElicitationAnswer | None, dict[str, str]]:
        """(the accepted answer, {}) or (None, {field key: what is wrong}) when a field does not pass."""
        if self.request.mode == "url":
            return ElicitationAnswer("accept"), {}
        props: dict[str, Any] = self.request.schema.get("properties") or {}
        required = set(self.request.schema.get("required") or [])
        content: dict[str, Any] = {}
        problems: dict[str, str] = {}
        for name, prop in props.items():
            value = self.values.get(name)
            if value is None or value == "" or value == []:
                if prop.get("type") == "boolean" and name in required:
                    content[name] = False
                elif name in required:
                    problems[name] = "required"
                continue
            try:
                content[name] = convert(prop, _as_text(value))
            except ValueError as exc:
                problems[name] = str(exc)
        return (None, problems) if problems else (ElicitationAnswer("accept", content), {})

    @staticmethod
    def decline() -> ElicitationAnswer:
        return ElicitationAnswer("decline")

    @staticmethod
    def cancel() -> ElicitationAnswer:
        return ElicitationAnswer("cancel")


def _as_text(value: Any) -> str:
    """A widget's value as the text `convert` reads (booleans as yes/no, lists comma-separated)."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        return ",".join(str(v) for v in value)
    return str(value)
