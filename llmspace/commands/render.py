"""CLI command `llmspace render THREAD [--var NAME=VALUE]…` (see llmspace/cli.py for the contract).

Prints the system prompt and the messages exactly as the model would receive them (variables
and templates rendered, frozen values applied), then any warnings on stderr. Nothing is saved.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

from ..errors import UserFacingError

if TYPE_CHECKING:
    from ..app import App


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("render", help="print a thread as the model would receive it (variables rendered)")
    p.add_argument("thread", metavar="THREAD", help="thread path relative to the workspace, e.g. folder/name.json (or a path to a file inside the workspace)")
    p.add_argument("--var", action="append", default=[], metavar="NAME=VALUE",
                   help="set a text variable for this render (repeatable)")
    p.add_argument("--json", action="store_true", help="print the rendered thread as JSON")
    p.set_defaults(handler=run)


def parse_vars(items: list[str]) -> dict[str, str]:
    """`NAME=VALUE` pairs from `--var`; a missing `=` is a clear error."""
    out: dict[str, str] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise UserFacingError(f"--var {item!r}: expected NAME=VALUE.", hint="For example: --var topic=\"space travel\"")
        out[name.strip()] = value
    return out


def thread_rel(app: App, rel: str) -> str:
    """Accept the thread path with or without `.json`."""
    if not rel.endswith(".json") and not app.workspace.exists(rel) and app.workspace.exists(rel + ".json"):
        return rel + ".json"
    return rel


def run(args: argparse.Namespace, app: App) -> int:
    from ..core.templating.render import render_thread
    from ..core.templating.resolution import RenderEnv
    from .run import thread_path

    overrides = parse_vars(args.var)
    rel = thread_path(app, args.thread)  # as `run` and `history` accept it (a file path inside the workspace too)
    thread = app.workspace.open(rel)
    rendered = render_thread(thread, RenderEnv(skills=app.skills, overrides=overrides))
    model_thread = rendered.apply(thread)
    if args.json:
        print(json.dumps(_as_json(model_thread), indent=2, ensure_ascii=False))
    else:
        sys.stdout.write(format_text(model_thread))
    for warning in rendered.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    return 0


def _texts(parts: list[Any]) -> list[str]:
    return [p.text for p in parts if getattr(p, "type", None) == "text"]


def format_text(thread: Any) -> str:
    """Readable listing: a header line per system prompt, message and tool result."""
    out: list[str] = []
    system = thread.context.systemPrompt if thread.context is not None else None
    if system:
        out.append("=== system ===\n" + system + "\n")
    for msg in thread.messages:
        lines = _texts(msg.content)
        for part in msg.content:
            if getattr(part, "type", None) == "image_data":
                lines.append(f"[image {part.mimeType}, {len(part.data)} base64 characters]")
        for call in getattr(msg, "toolCalls", None) or []:
            args = json.dumps(call.input.arguments, ensure_ascii=False)
            lines.append(f"[tool call {call.id}: {call.input.name} {args}]")
        out.append(f"=== {msg.role} ({msg.id}) ===\n" + "\n".join(lines) + "\n")
        for call in getattr(msg, "toolCalls", None) or []:
            if call.output is not None:
                error = " error" if call.output.isError else ""
                out.append(f"=== tool result{error} ({call.id}, {call.input.name}) ===\n"
                           + "\n".join(_texts(call.output.content)) + "\n")
    return "\n".join(out)


def _as_json(thread: Any) -> dict[str, Any]:
    system = thread.context.systemPrompt if thread.context is not None else None
    messages = []
    for msg in thread.messages:
        item: dict[str, Any] = {"id": msg.id, "role": msg.role, "text": "\n".join(_texts(msg.content))}
        calls = []
        for call in getattr(msg, "toolCalls", None) or []:
            entry: dict[str, Any] = {"id": call.id, "name": call.input.name, "arguments": call.input.arguments}
            if call.output is not None:
                entry["result"] = "\n".join(_texts(call.output.content))
                entry["isError"] = bool(call.output.isError)
            calls.append(entry)
        if calls:
            item["toolCalls"] = calls
        messages.append(item)
    return {"systemPrompt": system or "", "messages": messages}
