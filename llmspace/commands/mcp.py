"""CLI command group `mcp` (see llmspace/cli.py for the contract).

  llmspace mcp list [--json]                       servers, transport, readiness, tool count;
                                                   plugin servers (plugin:NAME:mcp:ID) listed apart;
                                                   --json masks URL secrets, header and env values
  llmspace mcp add NAME [--env K=V] [--header K=V] [--cwd DIR] [--timeout S]
                        (--http URL | --sse URL | --stdio CMD [ARGS...])   (--stdio comes last)
  llmspace mcp remove NAME
  llmspace mcp test SERVER                         connect + list tools; saved as readiness
  llmspace mcp tools|prompts|resources SERVER
  llmspace mcp call SERVER TOOL [JSON_ARGS] [--timeout S]   prints the flattened result; exit 1 on isError
SERVER may be a plugin server's canonical ID (`plugin:NAME:mcp:ID`); those cannot be
removed here (their plugin's settings configure them). Backed by `app.mcp` (`llmspace.mcp.hub.McpHub`).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

from ..errors import UserFacingError
from .parsers import help_handler

if TYPE_CHECKING:
    from ..app import App


def _pairs(values: list[str] | None, what: str) -> dict[str, str] | None:
    if not values:
        return None
    out: dict[str, str] = {}
    for item in values:
        sep_char = ":" if what == "header" and "=" not in item else "="
        key, sep, value = item.partition(sep_char)
        if not sep or not key.strip():
            raise UserFacingError(f"--{what} expects KEY=VALUE, got {item!r}.")
        out[key.strip()] = value.strip() if what == "header" else value
    return out


def _warn_settings(app: App) -> None:
    app.mcp.settings.servers()
    if app.mcp.settings.error is not None:
        print(f"warning: {app.mcp.settings.error}", file=sys.stderr)


def _rows(servers: list[Any], first: tuple[str, ...], key: Any) -> None:
    rows = [first]
    for s in servers:
        r = s.readiness
        status = (r.status if r else "untested") + ("" if s.is_enabled else " (disabled)")
        count = "-" if r is None or r.toolCount is None else str(r.toolCount)
        rows.append((key(s), s.transport, status, count))
    widths = [max(len(row[i]) for row in rows) for i in range(len(first))]
    for row in rows:
        print("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())


def cmd_list(args: argparse.Namespace, app: App) -> int:
    from ..mcp.servers import is_plugin_server, plugin_of

    every = app.mcp.servers()
    _warn_settings(app)
    if args.json:
        from ..redact import KNOWN, mask_url

        def shown(s: Any) -> dict[str, Any]:
            data = s.to_json()
            if data.get("url"):  # a password or token in the URL is masked (settings/mcp.json keeps it)
                data["url"] = mask_url(data["url"])
            if isinstance(data.get("headers"), dict):  # header values are credentials: never printed
                data["headers"] = dict.fromkeys(data["headers"], "***")
            if isinstance(data.get("env"), dict) and not is_plugin_server(s):  # nor what the user typed as env
                data["env"] = dict.fromkeys(data["env"], "***")
            # plugin servers hold interpolated values: the secrets among them are masked
            return {**KNOWN.redactor.value(data), "source": f"plugin:{plugin_of(s.id)}"} if is_plugin_server(s) else {**data, "source": "user"}

        print(json.dumps([shown(s) for s in every], indent=2, ensure_ascii=False))
        return 0
    servers = [s for s in every if not is_plugin_server(s)]
    plugins = [s for s in every if is_plugin_server(s)]
    if not servers and app.mcp.settings.error is not None:
        print("No MCP servers loaded: fix settings/mcp.json first (see the warning); nothing was changed.")
    elif not servers:
        print("No MCP servers configured. Add one with `llmspace mcp add NAME --stdio CMD [ARGS...]`.")
    else:
        _rows(servers, ("NAME", "TRANSPORT", "READINESS", "TOOLS"), lambda s: s.name)
    if plugins:
        print("\nMCPs in plugins (configure them with `llmspace plugins settings NAME`):")
        _rows(plugins, ("ID", "TRANSPORT", "READINESS", "TOOLS"), lambda s: f"{s.id}  ({s.name})")
    return 0


def cmd_add(args: argparse.Namespace, app: App) -> int:
    chosen = [x for x in (args.stdio, args.http, args.sse) if x]
    if len(chosen) != 1:
        raise UserFacingError("Give exactly one of --stdio CMD [ARGS...], --http URL or --sse URL.")
    fields: dict[str, Any] = {"name": args.name}
    if args.stdio:
        fields.update(transport="stdio", command=args.stdio[0], args=list(args.stdio[1:]), cwd=args.cwd)
    else:
        fields.update(transport="streamableHttp" if args.http else "sse", url=args.http or args.sse)
    env, headers = _pairs(args.env, "env"), _pairs(args.header, "header")
    if env:
        fields["env"] = env
    if headers:
        fields["headers"] = headers
    if args.timeout:
        fields["timeoutSeconds"] = args.timeout
    cfg = app.mcp.add_server(**fields)
    print(f"Added MCP server {cfg.name!r} ({cfg.transport}). Check it with `llmspace mcp test {cfg.serverName}`.")
    return 0


def cmd_remove(args: argparse.Namespace, app: App) -> int:
    cfg = app.mcp.remove_server(args.name)
    print(f"Removed MCP server {cfg.name!r}.")
    return 0


def _print_tools(tools: list[Any]) -> None:
    for t in tools:
        line = f"  {t.directName}"
        if t.directName.split("__", 2)[-1] != t.name:
            line += f"  (MCP name {t.name!r})"
        if t.description:
            line += f" — {t.description.strip().splitlines()[0]}"
        print(line)
        if not t.available:
            print(f"      unavailable: {t.reason}")


def cmd_test(args: argparse.Namespace, app: App) -> int:
    readiness = app.mcp.test(args.server)
    if readiness.status != "ready":
        print(f"{args.server}: {readiness.status}: {readiness.lastError}", file=sys.stderr)
        return 1
    tools = app.mcp.list_tools(args.server)
    print(f"{args.server}: ready, {readiness.toolCount} tool(s)")
    _print_tools(tools)
    return 0


def cmd_tools(args: argparse.Namespace, app: App) -> int:
    _print_tools(app.mcp.list_tools(args.server, refresh=True))
    return 0


def cmd_prompts(args: argparse.Namespace, app: App) -> int:
    for p in app.mcp.list_prompts(args.server):
        names = ", ".join(a.get("name", "") + ("" if a.get("required") else "?") for a in p.get("arguments") or [])
        desc = f" — {p['description']}" if p.get("description") else ""
        print(f"  {p['name']}({names}){desc}")
    return 0


def cmd_resources(args: argparse.Namespace, app: App) -> int:
    for r in app.mcp.list_resources(args.server):
        mime = f" [{r['mimeType']}]" if r.get("mimeType") else ""
        print(f"  {r['uri']}  {r.get('name', '')}{mime}")
    return 0


def cmd_call(args: argparse.Namespace, app: App) -> int:
    try:
        arguments = json.loads(args.json_args)
    except json.JSONDecodeError as exc:
        raise UserFacingError(f"JSON_ARGS is not valid JSON: {exc.msg} at column {exc.colno}.",
                              hint='Example: \'{"text": "hello"}\'') from None
    if not isinstance(arguments, dict):
        raise UserFacingError("JSON_ARGS must be a JSON object, e.g. '{\"a\": 1}'.")
    out = app.mcp.call_tool(args.server, args.tool, arguments, timeout=args.timeout)
    text = out.text()
    if out.isError:
        print(text, file=sys.stderr)
        return 1
    print(text)
    return 0


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `llmspace mcp …`."""
    p = sub.add_parser("mcp", help="MCP servers: list, add, remove, test, call")
    msub = p.add_subparsers(dest="mcp_command", metavar="ACTION")
    p.set_defaults(handler=help_handler(p))

    q = msub.add_parser("list", help="configured servers with transport, readiness and tool count")
    q.add_argument("--json", action="store_true", help="print the configuration as JSON")
    q.set_defaults(handler=cmd_list)

    q = msub.add_parser("add", help="add a server (put --stdio CMD ARGS... last)")
    q.add_argument("name")
    q.add_argument("--env", action="append", metavar="KEY=VALUE", help="environment for a stdio server ($VAR allowed)")
    q.add_argument("--header", action="append", metavar="KEY=VALUE", help="HTTP header for a remote server ($VAR allowed)")
    q.add_argument("--cwd", help="working directory of a stdio server")
    q.add_argument("--timeout", type=float, help="tool-call timeout in seconds (default 300)")
    q.add_argument("--http", metavar="URL", help="streamable HTTP endpoint, e.g. http://127.0.0.1:3001/mcp")
    q.add_argument("--sse", metavar="URL", help="SSE endpoint, e.g. http://127.0.0.1:3001/sse")
    q.add_argument("--stdio", nargs=argparse.REMAINDER, metavar="CMD", help="command and arguments (must come last)")
    q.set_defaults(handler=cmd_add)

    q = msub.add_parser("remove", help="remove a server")
    q.add_argument("name")
    q.set_defaults(handler=cmd_remove)

    for name, fn, text in (("test", cmd_test, "connect and list tools; saves the readiness"),
                           ("tools", cmd_tools, "list the server's tools"),
                           ("prompts", cmd_prompts, "list the server's prompts"),
                           ("resources", cmd_resources, "list the server's resources")):
        q = msub.add_parser(name, help=text)
        q.add_argument("server")
        q.set_defaults(handler=fn)

    q = msub.add_parser("call", help="call a tool and print its result (exit 1 when it is an error)")
    q.add_argument("server")
    q.add_argument("tool")
    q.add_argument("json_args", nargs="?", default="{}", metavar="JSON_ARGS")
    q.add_argument("--timeout", type=float, help="seconds (default: the server's timeoutSeconds or 300)")
    q.set_defaults(handler=cmd_call)
