"""CLI command group `tools`: `llmspace tools list [--json]` prints the built-in tools by
group (fileSystem / web / misc) with their parameters (`*` = required).
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
    p = sub.add_parser("tools", help="built-in tools", description="Built-in tools the model can call.")
    tools_sub = p.add_subparsers(dest="tools_command", metavar="SUBCOMMAND")
    lst = tools_sub.add_parser("list", help="list the built-in tools by group, with their parameters")
    lst.add_argument("--json", action="store_true", help="print the tool definitions as JSON")
    lst.set_defaults(handler=list_tools)
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
    if args.json:
        out = [{"group": g, **tools[n].model_dump(exclude_unset=True)} for g, names in groups.items() for n in names]
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
    sys.stdout.write("\n".join(lines))
    return 0
