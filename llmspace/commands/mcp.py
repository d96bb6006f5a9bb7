"""CLI command group `mcp` (see llmspace/cli.py for the contract).

  llmspace mcp list [--json]                       servers, transport, readiness, tool count;
                                                   plugin servers (plugin:NAME:mcp:ID) listed apart;
                                                   --json masks URL secrets, header and env values
  llmspace mcp add NAME [--env K=V] [--header K=V] [--cwd DIR] [--timeout S]
                        (--http URL | --sse URL | --stdio CMD [ARGS...])   (--stdio comes last)
  llmspace mcp remove NAME
  llmspace mcp test SERVER                         connect + list tools; saved as readiness; names the
                                                   protocol revision and the features offered
  llmspace mcp tools SERVER                        list the tools and check them against their pins
  llmspace mcp trust SERVER [--tool NAME] [--yes]  show how changed tools differ; accept them
  llmspace mcp prompts|resources SERVER            (resources: with the resource templates)
  llmspace mcp prompt SERVER NAME [--arg K=V …] [--into THREAD]   the prompt's messages (JSON, or
                                                   inserted into the thread, marked literal)
  llmspace mcp complete SERVER prompt NAME|resource TEMPLATE ARG PREFIX   the server's completions
  llmspace mcp read SERVER URI [--into THREAD [--message ID]]   print a resource, or attach it to a
                                                   user message (a new one without --message)
  llmspace mcp call SERVER TOOL [JSON_ARGS] [--timeout S] [--no-input]   prints the flattened result;
                                                   exit 1 on isError; a server's request for input is
                                                   asked on a terminal, else declined
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


def _rows(servers: list[Any], first: tuple[str, ...], key: Any, changed_of: Any) -> None:
    rows = [first]
    for s in servers:
        r = s.readiness
        status = (r.status if r else "untested") + ("" if s.is_enabled else " (disabled)")
        count = "-" if r is None or r.toolCount is None else str(r.toolCount)
        changed = len(changed_of(s.id)) if r is not None else 0
        rows.append((key(s), s.transport, status + (f", {changed} changed" if changed else ""), count))
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
        _rows(servers, ("NAME", "TRANSPORT", "READINESS", "TOOLS"), lambda s: s.name, app.mcp.pins.last_changed)
    if plugins:
        print("\nMCPs in plugins (configure them with `llmspace plugins settings NAME`):")
        _rows(plugins, ("ID", "TRANSPORT", "READINESS", "TOOLS"), lambda s: f"{s.id}  ({s.name})",
              app.mcp.pins.last_changed)
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
        if t.pin == "new":
            line += "  [new]"
        print(line)
        if not t.available:
            print(f"      unavailable: {t.reason}")


def cmd_test(args: argparse.Namespace, app: App) -> int:
    readiness = app.mcp.test(args.server)
    if readiness.status != "ready":
        print(f"{args.server}: {readiness.status}: {readiness.lastError}", file=sys.stderr)
        return 1
    tools = app.mcp.list_tools(args.server)
    info = app.mcp.extras.features(args.server)
    version = str(info.get("protocolVersion") or "?")
    era = "stateless" if version >= "2026-07-28" else "with initialize"
    server = info.get("server") or {}
    named = f" {server.get('name')}" + (f" {server['version']}" if server.get("version") else "") if server.get("name") else ""
    print(f"{args.server}: ready, protocol {version} ({era}),{named} {readiness.toolCount} tool(s)")
    print(f"  offers: {', '.join(info.get('features') or []) or 'nothing declared'}")
    _print_tools(tools)
    return 0


def cmd_tools(args: argparse.Namespace, app: App) -> int:
    _print_tools(app.mcp.list_tools(args.server, refresh=True))
    return 0


def cmd_trust(args: argparse.Namespace, app: App) -> int:
    changed = [(t, d) for t, d in app.mcp.changed_tools(args.server) if args.tool in (None, t.name, t.directName)]
    if not changed:
        print(f"{args.server}: no changed tool{f' named {args.tool!r}' if args.tool else ''}; nothing to trust.")
        return 0
    for tool, diff in changed:
        print(f"{tool.name} changed since you trusted it:\n{diff}")
    if not args.yes:
        if not sys.stdin.isatty():
            print("Not trusted: standard input is not a terminal; give --yes to accept the changes.", file=sys.stderr)
            return 1
        try:
            answer = input(f"Trust the new definition of {', '.join(t.name for t, _d in changed)}? [y/N] ")
        except EOFError:
            answer = ""
        if answer.strip().lower() not in ("y", "yes"):
            print("Not trusted.", file=sys.stderr)
            return 1
    for tool, _d in changed:
        app.mcp.trust(args.server, tool.name)
    print(f"Trusted: {', '.join(t.name for t, _d in changed)}.")
    return 0


def cmd_prompt(args: argparse.Namespace, app: App) -> int:
    from ..mcp.content import prompt_messages

    result = app.mcp.extras.get_prompt(args.server, args.name, _pairs(args.arg, "arg") or {})
    messages = prompt_messages(result)
    if not args.into:
        print(json.dumps(messages, indent=2, ensure_ascii=False))
        return 0
    from ..mcp.content import insert_messages
    from .run import thread_path

    rel = thread_path(app, args.into)
    thread = app.workspace.open(rel)
    insert_messages(thread, messages)
    app.workspace.save(rel, thread)
    print(f"Inserted {len(messages)} message(s) of prompt {args.name!r} into {rel} (sent as written, never "
          "rendered as a template).")
    return 0


def cmd_complete(args: argparse.Namespace, app: App) -> int:
    for value in app.mcp.extras.complete(args.server, args.kind, args.ref, args.argument, args.prefix,
                                  _pairs(args.context, "context")):
        print(value)
    return 0


def cmd_read(args: argparse.Namespace, app: App) -> int:
    from ..mcp.content import resource_parts

    contents = app.mcp.extras.read_resource(args.server, args.uri)
    if args.message and not args.into:
        raise UserFacingError("--message needs --into THREAD.")
    if not args.into:
        from ..mcp.flatten import flatten_part

        print("\n\n".join(flatten_part({"type": "resource", "resource": c}) for c in contents))
        return 0
    parts = resource_parts(contents)
    from ..mcp.content import attach
    from .run import thread_path

    rel = thread_path(app, args.into)
    thread = app.workspace.open(rel)
    attach(thread, args.message, parts)
    app.workspace.save(rel, thread)
    print(f"Attached {args.uri} to {'message ' + args.message if args.message else 'a new user message'} in {rel} "
          "(sent as written, never rendered as a template).")
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
    templates = app.mcp.extras.list_resource_templates(args.server)
    if templates:
        print("templates (fill them with `llmspace mcp complete SERVER resource TEMPLATE ARG PREFIX`):")
    for t in templates:
        mime = f" [{t['mimeType']}]" if t.get("mimeType") else ""
        print(f"  {t['uriTemplate']}  {t.get('name', '')}{mime}")
    return 0


def cmd_call(args: argparse.Namespace, app: App) -> int:
    try:
        arguments = json.loads(args.json_args)
    except json.JSONDecodeError as exc:
        raise UserFacingError(f"JSON_ARGS is not valid JSON: {exc.msg} at column {exc.colno}.",
                              hint='Example: \'{"text": "hello"}\'') from None
    if not isinstance(arguments, dict):
        raise UserFacingError("JSON_ARGS must be a JSON object, e.g. '{\"a\": 1}'.")
    from .elicit_terminal import elicitor

    out = app.mcp.call_tool(args.server, args.tool, arguments, timeout=args.timeout, elicit=elicitor(args.no_input))
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

    for name, fn, text in (("test", cmd_test, "connect and list tools; saves the readiness; names the protocol revision"),
                           ("tools", cmd_tools, "list the server's tools and check them against their pins"),
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
    q.add_argument("--no-input", action="store_true", help="decline the server's requests for input")
    q.set_defaults(handler=cmd_call)

    q = msub.add_parser("trust", help="show how the server's changed tools differ and accept them")
    q.add_argument("server")
    q.add_argument("--tool", metavar="NAME", help="only this tool")
    q.add_argument("--yes", action="store_true", help="accept without asking (needed without a terminal)")
    q.set_defaults(handler=cmd_trust)

    q = msub.add_parser("prompt", help="get a prompt: print its messages as JSON, or insert them into a thread")
    q.add_argument("server")
    q.add_argument("name")
    q.add_argument("--arg", action="append", metavar="KEY=VALUE", help="a prompt argument (repeatable)")
    q.add_argument("--into", metavar="THREAD", help="append the messages to this thread")
    q.set_defaults(handler=cmd_prompt)

    q = msub.add_parser("complete", help="the server's completions of a prompt or resource-template argument")
    q.add_argument("server")
    q.add_argument("kind", choices=["prompt", "resource"])
    q.add_argument("ref", metavar="NAME|TEMPLATE", help="the prompt's name or the resource template's URI template")
    q.add_argument("argument", metavar="ARG")
    q.add_argument("prefix", metavar="PREFIX", nargs="?", default="")
    q.add_argument("--context", action="append", metavar="KEY=VALUE", help="an argument already filled (repeatable)")
    q.set_defaults(handler=cmd_complete)

    q = msub.add_parser("read", help="read a resource: print it, or attach it to a user message of a thread")
    q.add_argument("server")
    q.add_argument("uri")
    q.add_argument("--into", metavar="THREAD", help="attach it to this thread (a new user message without --message)")
    q.add_argument("--message", metavar="ID", help="the user message to attach it to")
    q.set_defaults(handler=cmd_read)
