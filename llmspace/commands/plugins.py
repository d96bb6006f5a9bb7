"""CLI command group `plugins` (see llmspace/cli.py for the contract).

  llmspace plugins list [--json]        name, version, status, extension counts
  llmspace plugins info NAME            metadata, location, compatibility, extensions with
                                        canonical IDs and status, diagnostics (error-ids, logs)
  llmspace plugins enable|disable|reload NAME
  llmspace plugins refresh              rescan LLM_SPACE_HOME/plugins
  llmspace plugins settings NAME [KEY=VALUE ...]   show the form, or set values (nested.key=…)
  llmspace plugins install [--yes] ZIP [ZIP ...] / remove NAME
  llmspace plugins approve NAME         grant the capabilities it asked for (docs/plugins.md)
  llmspace plugins pack DIR [-o ZIP]    a release ZIP (llmspace/plugins/package/pack.py)
  llmspace plugins check DIR            the release checklist, one PASS/FAIL line per item

Backed by `app.plugins` (llmspace/plugins/service.py). More actions (pack, check) are
added with `ACTIONS` below: one `(name, help, configure)` entry each.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import UserFacingError
from ..plugins.contract import APP_COMPAT_VERSION
from ..plugins.diagnostics import Diagnostic
from ..plugins.model import PluginRecord
from ..plugins.settings_form import MASK, FormField, SettingsForm, get_path
from .approval import approver
from .parsers import help_handler

if TYPE_CHECKING:
    from ..app import App


def _counts(record: PluginRecord) -> str:
    counts = record.counts()
    return ", ".join(f"{n} {kind}" for kind, n in counts.items()) or "-"


def _notices(app: App) -> None:
    for line in app.plugins.notices():
        print(f"warning: {line}", file=sys.stderr)


def _table(rows: list[tuple[str, ...]]) -> None:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for row in rows:
        print("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())


def cmd_list(args: argparse.Namespace, app: App) -> int:
    records = app.plugins.records()
    if args.json:
        print(json.dumps({"notices": app.plugins.notices(), "plugins": [_json(r) for r in records]},
                         indent=2, ensure_ascii=False))
        return 0
    for line in app.plugins.notices():
        print(f"note: {line}")
    if not records:
        print(f"No plugins installed in {app.root.root / 'plugins'}.")
        return 0
    rows: list[tuple[str, ...]] = [("NAME", "VERSION", "STATUS", "EXTENSIONS")]
    rows += [(r.key, r.version or "-", r.status + (" (dev)" if r.dev else ""), _counts(r)) for r in records]
    _table(rows)
    broken = [r for r in records if r.status in ("error", "degraded")]
    if broken:
        print(f"\nSee the problems with: llmspace plugins info {broken[0].key}")
    return 0


def _json(r: PluginRecord) -> dict[str, Any]:
    return {
        "name": r.key, "version": r.version, "status": r.status, "dev": r.dev, "enabled": r.enabled,
        "disabledReason": r.disabled_reason, "compatible": r.compatible, "location": str(r.folder),
        "extensions": [{"id": e.canonical_id, "kind": e.kind, "status": e.status, "reason": e.reason,
                        "path": str(e.path), "errorId": e.error_id or None,
                        "log": str(e.log_path) if e.log_path else None} for e in r.extensions],
        "diagnostics": [_diag_json(d) for d in r.diagnostics],
    }


def _diag_json(d: Diagnostic) -> dict[str, Any]:
    return {"level": d.level, "stage": d.stage, "summary": d.summary, "errorId": d.error_id or None,
            "log": str(d.log_path) if d.log_path else None}


def _rel(record: PluginRecord, path: Any) -> str:
    try:
        return str(path.relative_to(record.folder).as_posix())
    except ValueError:
        return str(path)


def cmd_info(args: argparse.Namespace, app: App) -> int:
    r = app.plugins.get(args.name)
    _notices(app)
    m = r.manifest
    title = f" — {m.display_name}" if m and m.display_name else ""
    print(f"{r.key} {r.version}{title}".rstrip())
    print(f"  status:        {r.status}" + (f" ({r.disabled_reason})" if r.status == "disabled" else ""))
    print(f"  enabled:       {'yes' if r.enabled else 'no'}")
    print(f"  location:      {r.folder}" + (" (dev: served in place by `llmspace plugins dev`)" if r.dev else ""))
    if m is not None:
        for label, value in (("description", m.description), ("author", m.author), ("license", m.license),
                             ("homepage", m.homepage), ("repository", m.repository), ("keywords", ", ".join(m.keywords))):
            if value:
                print(f"  {label + ':':<14} {value}")
        verdict = "compatible" if r.compatible else "incompatible"
        print(f"  compatibility: engines[\"llm-space\"] {m.engines_range!r}: {verdict} with LLM Space {APP_COMPAT_VERSION}")
        print(f"  icon:          {'icon.png' if r.icon else 'default'}")
        if r.has_settings_form:
            print(f"  settings:      llmspace plugins settings {r.key}")
        _print_capabilities(r)
    if r.extensions:
        print("Extensions:")
        for e in r.extensions:
            desc = f" — {e.shown_description}" if e.shown_description else ""
            print(f"  {e.status:<8} {e.canonical_id}  ({_rel(r, e.path)}){desc}")
            if e.reason:
                print(f"           {e.reason}")
    elif m is not None:
        print("Extensions: none found")
    if r.diagnostics:
        print("Diagnostics:")
        for d in r.diagnostics:
            print(f"  {d.level}: [{d.stage}] {d.summary}")
            if d.error_id:
                print(f"      error-id {d.error_id}" + (f", log {d.log_path}" if d.log_path else ""))
    return 0


def _status_line(verb: str, r: PluginRecord) -> None:
    extra = f" ({r.disabled_reason})" if r.status == "disabled" and r.disabled_reason else ""
    print(f"{verb} {r.key}: {r.status}{extra}, {_counts(r)}.")
    failed = r.failed()
    if failed or any(d.level == "error" for d in r.diagnostics):
        print(f"See the problems with: llmspace plugins info {r.key}")


def cmd_enable(args: argparse.Namespace, app: App) -> int:
    _status_line("Enabled", app.plugins.enable(args.name))
    return 0


def cmd_disable(args: argparse.Namespace, app: App) -> int:
    _status_line("Disabled", app.plugins.disable(args.name))
    return 0


def cmd_reload(args: argparse.Namespace, app: App) -> int:
    _status_line("Reloaded", app.plugins.reload(args.name))
    return 0


def cmd_refresh(args: argparse.Namespace, app: App) -> int:
    records = app.plugins.refresh()
    _notices(app)
    by_status: dict[str, int] = {}
    for r in records:
        by_status[r.status] = by_status.get(r.status, 0) + 1
    summary = ", ".join(f"{n} {s}" for s, n in sorted(by_status.items()))
    print(f"Found {len(records)} plugin(s)" + (f": {summary}." if summary else "."))
    return 0


def _shown(f: FormField, value: Any) -> str:
    if value is None:
        return "(not set)"
    if f.secret:
        return MASK if value not in ("", []) else '""'
    return json.dumps(value, ensure_ascii=False)


def _print_form(form: SettingsForm, values: dict[str, Any]) -> None:
    for f in form.walk():
        if f.type == "object":
            print(f"  {f.key}: {f.label}" + (f" — {f.description}" if f.description else ""))
            continue
        kind = f"array of {f.item_type}" if f.type == "array" else f.type
        tags = [kind] + (["required"] if f.required else []) + (["secret"] if f.secret else [])
        label = f" — {f.title}" if f.title else ""
        print(f"  {f.key} ({', '.join(tags)}){label}")
        if f.description:
            print(f"      {f.description}")
        if f.enum is not None:
            print(f"      one of: {', '.join(json.dumps(v, ensure_ascii=False) for v in f.enum)}")
        if f.has_default:
            print(f"      default: {_shown(f, f.default)}")
        print(f"      current: {_shown(f, get_path(values, f.path))}")


def cmd_settings(args: argparse.Namespace, app: App) -> int:
    if args.assignments:
        pairs = []
        for item in args.assignments:
            key, sep, value = item.partition("=")
            if not sep or not key.strip():
                raise UserFacingError(f"Expected KEY=VALUE, got {item!r}.", hint="Example: endpoint=https://example.com")
            pairs.append((key.strip(), value))
        _status_line("Saved the settings of", app.plugins.update_settings(args.name, pairs))
        return 0
    view = app.plugins.settings_view(args.name)
    _notices(app)
    if view.form_error:
        print(f"The settings form is disabled: {view.form_error}")
        print(f"Saved settings (unchanged): {json.dumps(view.saved, ensure_ascii=False)}")
        return 1
    if view.form is None:
        print(f"{args.name} has no config.schema.json; saved settings:")
        print(json.dumps(view.saved, indent=2, ensure_ascii=False))
        return 0
    heading = view.form.title or f"Settings of {args.name}"
    print(heading + (f" — {view.form.description}" if view.form.description else ""))
    _print_form(view.form, view.values)
    for p in view.problems:
        print(f"problem: {p}")
    return 0


def cmd_install(args: argparse.Namespace, app: App) -> int:
    status = 0
    for path in args.zips:
        try:
            result, record = app.plugins.install(path, approver(args.yes))  # its code ran once now
        except UserFacingError as exc:
            print(f"error: {exc}", file=sys.stderr)
            status = 1
            continue
        print(f"{result.message} Status: {record.status}, {_counts(record)}.")
        if record.pending is not None:
            print(f"It was installed disabled (not approved). Approve it with: llmspace plugins approve {record.key}")
    return status


def cmd_approve(args: argparse.Namespace, app: App) -> int:
    record = app.plugins.approve(args.name)
    granted = ", ".join(record.granted or ()) or "nothing"
    print(f"Granted {record.key}: {granted}.")
    _status_line("Enabled", record)
    return 0


def _print_capabilities(r: PluginRecord) -> None:
    from ..plugins.model import capability_summary

    print("  capabilities:")
    for line in capability_summary(r):
        print(f"    {line}")


def cmd_remove(args: argparse.Namespace, app: App) -> int:
    where = app.plugins.remove(args.name)
    place = "the system trash" if where == "os-trash" else where
    print(f"Removed plugin {args.name} (moved to {place}); its settings and data were kept.")
    return 0


def cmd_pack(args: argparse.Namespace, app: App) -> int:
    from ..plugins.package.pack import pack

    print(pack(Path(args.dir), Path(args.output) if args.output else None).message)
    return 0


def cmd_check(args: argparse.Namespace, app: App) -> int:
    from ..plugins.package.check import check_plugin, failed, format_report

    items = check_plugin(Path(args.dir))
    if not failed(items):  # the files are sound: load the code in a host too
        from ..plugins.package.check_code import check_code
        from ..plugins.package.manifest import parse_manifest

        manifest = parse_manifest((Path(args.dir) / "package.json").read_bytes(), where="package.json")
        items += check_code(Path(args.dir), manifest.name, manifest.version)
    print(format_report(items))
    return 1 if failed(items) else 0


def _configure_pack(p: argparse.ArgumentParser) -> None:
    p.add_argument("dir", metavar="DIR", help="the plugin folder (holding package.json)")
    p.add_argument("-o", "--output", metavar="ZIP", help="the ZIP to write (default: <name>-<version>.zip beside DIR)")
    p.set_defaults(handler=cmd_pack)


def _configure_check(p: argparse.ArgumentParser) -> None:
    p.add_argument("dir", metavar="DIR", help="the plugin folder (holding package.json)")
    p.set_defaults(handler=cmd_check)


def _name(p: argparse.ArgumentParser) -> None:
    p.add_argument("name", metavar="NAME", help="the plugin ID (package.json name), e.g. @example/team-tools")


def _configure_list(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="print the plugins as JSON")
    p.set_defaults(handler=cmd_list)


def _configure_settings(p: argparse.ArgumentParser) -> None:
    _name(p)
    p.add_argument("assignments", nargs="*", metavar="KEY=VALUE", help="values to set (nested.key=value)")
    p.set_defaults(handler=cmd_settings)


def _configure_install(p: argparse.ArgumentParser) -> None:
    p.add_argument("zips", nargs="+", metavar="ZIP", help="plugin ZIP files")
    p.add_argument("--yes", "-y", action="store_true",
                   help="grant the capabilities each plugin asks for (shown) without asking")
    p.set_defaults(handler=cmd_install)


def _with_name(handler: Callable[[argparse.Namespace, App], int]) -> Callable[[argparse.ArgumentParser], None]:
    def configure(p: argparse.ArgumentParser) -> None:
        _name(p)
        p.set_defaults(handler=handler)
    return configure


# (action, help, configure(parser)); further actions append here.
ACTIONS: list[tuple[str, str, Callable[[argparse.ArgumentParser], None]]] = [
    ("list", "installed plugins with version, status and extension counts", _configure_list),
    ("info", "metadata, compatibility, extensions and diagnostics of one plugin", _with_name(cmd_info)),
    ("enable", "enable a plugin (saved in settings/plugins.json)", _with_name(cmd_enable)),
    ("disable", "disable a plugin; its settings are kept", _with_name(cmd_disable)),
    ("reload", "reload one plugin after editing its files", _with_name(cmd_reload)),
    ("refresh", "rescan the plugins folder (added, removed, renamed)",
     lambda p: p.set_defaults(handler=cmd_refresh)),
    ("settings", "show a plugin's settings form, or set KEY=VALUE pairs", _configure_settings),
    ("install", "install or update plugins from ZIP files", _configure_install),
    ("approve", "grant the capabilities a plugin asked for and enable it", _with_name(cmd_approve)),
    ("remove", "move a plugin to the trash; its settings and data stay", _with_name(cmd_remove)),
    ("pack", "build a release ZIP of a plugin folder", _configure_pack),
    ("check", "run the release checklist on a plugin folder (exit 1 when an item fails)", _configure_check),
]


def _code_actions() -> list[tuple[str, str, Callable[[argparse.ArgumentParser], None]]]:
    from .plugin_code import ACTIONS as CODE_ACTIONS

    return CODE_ACTIONS


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `llmspace plugins …`."""
    p = sub.add_parser("plugins", help="plugins: list, info, enable, disable, reload, settings, install")
    psub = p.add_subparsers(dest="plugins_command", metavar="ACTION")
    p.set_defaults(handler=help_handler(p))
    for action, text, configure in [*ACTIONS, *_code_actions()]:
        configure(psub.add_parser(action, help=text))
