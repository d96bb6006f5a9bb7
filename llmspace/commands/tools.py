"""CLI command group `tools`:

  llmspace tools list [--json]     the built-in tools by group (fileSystem / web / misc) and
                                   the tools of active plugins, with their parameters (`*` =
                                   required); plugin tools show their canonical IDs
  llmspace tools add THREAD ID     enable a plugin tool in a thread (its name, description
                                   and parameters are copied into the thread's tools)

See llmspace/cli.py for the command contract.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

from .parsers import help_handler

if TYPE_CHECKING:
    from ..app import App


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `tools list`."""
    p = sub.add_parser("tools", help="built-in and plugin tools",
                       description="Built-in and plugin tools the model can call.")
    tools_sub = p.add_subparsers(dest="tools_command", metavar="SUBCOMMAND")
    lst = tools_sub.add_parser("list", help="list the built-in tools by group, with their parameters")
    lst.add_argument("--json", action="store_true", help="print the tool definitions as JSON")
    lst.set_defaults(handler=list_tools)
    add = tools_sub.add_parser("add", help="enable a plugin tool in a thread")
    add.add_argument("thread", metavar="THREAD", help="workspace path of the thread")
    add.add_argument("tool", metavar="ID", help="the tool's canonical ID (plugin:<name>:tool:<stem>, see `tools list`)")
    add.set_defaults(handler=add_tool)
    p.set_defaults(handler=help_handler(p))


def _signature(parameters: dict[str, Any] | None) -> str:
    props = (parameters or {}).get("properties") or {}
    required = set((parameters or {}).get("required") or [])
    parts = []
    for name, spec in props.items():
        kind = spec.get("type", "any") if isinstance(spec, dict) else "any"
        if isinstance(spec, dict) and "enum" in spec:
            kind = "|".join(str(v) for v in spec["enum"])
        parts.append(f"{name}{'*' if name in required else ''}: {kind}")
    return ", ".join(parts)


def list_tools(args: argparse.Namespace, app: App) -> int:
    from ..tools.builtins import builtin_groups, builtin_tools

    tools = {t.name: t for t in builtin_tools()}
    groups = builtin_groups()
    app.plugins.records()
    specs = app.plugin_code.tool_specs()
    if args.json:
        out = [{"group": g, **tools[n].model_dump(exclude_unset=True)} for g, names in groups.items() for n in names]
        out += [{"group": "plugins", "id": s.canonical_id, "plugin": s.ref.plugin, "name": s.name,
                 "description": s.description, "parameters": s.parameters, "strict": s.strict} for s in specs]
        sys.stdout.write(json.dumps(out, indent=2, ensure_ascii=False) + "\n")
        return 0
    lines: list[str] = []
    for group, names in groups.items():
        lines.append(f"{group}:")
        for name in names:
            tool = tools[name]
            flag = "  (needs a human answer)" if not tool.is_executable() else ""
            lines.append(f"  {name}({_signature(tool.parameters)}){flag}")
            lines.append(f"      {tool.description}")
        lines.append("")
    if specs:
        lines.append("plugins:")
        for s in specs:
            lines.append(f"  {s.name}({_signature(s.parameters)})  {s.canonical_id}")
            lines.append(f"      {s.description}")
        lines.append("")
    sys.stdout.write("\n".join(lines))
    return 0


def add_tool(args: argparse.Namespace, app: App) -> int:
    from ..errors import UserFacingError
    from ..plugins.code.calls import plugin_tool_entry_for
    from .run import thread_path

    rel = thread_path(app, args.thread)
    app.plugins.records()
    spec = next((s for s in app.plugin_code.tool_specs() if s.canonical_id == args.tool), None)
    if spec is None:
        raise UserFacingError(f"No active plugin tool {args.tool!r}.", hint="See `llmspace tools list` for the IDs.")
    from ..core.model import ThreadContext

    thread = app.workspace.open(rel)
    if thread.context is None:
        thread.context = ThreadContext()
    tools = list(thread.context.tools or [])
    if any(t.name == spec.name and getattr(t, "toolId", None) != spec.canonical_id for t in tools):
        raise UserFacingError(f"{rel} already has another tool named {spec.name!r}.",
                              hint="Remove that tool first; tool names must be unique in a thread.")
    entry = plugin_tool_entry_for(spec)
    tools = [t for t in tools if getattr(t, "toolId", None) != spec.canonical_id] + [entry]
    thread.context.tools = tools
    app.workspace.save(rel, thread)
    print(f"Enabled {spec.name} ({spec.canonical_id}) in {rel}.")
    return 0
