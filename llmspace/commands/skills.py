"""CLI command group `llmspace skills …` (see llmspace/cli.py for the contract).

`skills list` prints every discovered skill (name, enabled, source, folder, description):
first those of the user's folders, then each plugin source (`plugin:<name>`) apart, then the
problems found (name conflicts included: a skill in conflict is shown "conflict" and is not
used). `skills enable NAME` / `skills disable NAME` switch a skill on or off (plugin skills
too: the choice is kept in skills.json and survives disabling the plugin);
`skills enable|disable --source plugin:NAME` switches every skill of a plugin.
`skills show NAME` prints what the `skill` tool returns; `skills folders`, `skills add-folder PATH`
and `skills remove-folder PATH` manage the user's discovery folders (a plugin's folder
cannot be removed: disable the plugin instead).
"""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING

from .parsers import help_handler

if TYPE_CHECKING:
    from ..app import App
    from ..skills.skill import Skill


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("skills", help="list, enable and disable Agent Skills")
    group = p.add_subparsers(dest="skills_command", metavar="SUBCOMMAND")
    p.set_defaults(handler=help_handler(p))

    ls = group.add_parser("list", help="list discovered skills and problems")
    ls.add_argument("--json", action="store_true", help="print JSON")
    ls.set_defaults(handler=list_skills)
    for verb, enabled in (("enable", True), ("disable", False)):
        cmd = group.add_parser(verb, help=f"{verb} a skill by name, or every skill of a plugin (--source)")
        cmd.add_argument("name", nargs="?")
        cmd.add_argument("--source", metavar="plugin:NAME", help=f"{verb} every skill of this plugin source")
        cmd.set_defaults(handler=lambda args, app, on=enabled: set_enabled(args, app, on))
    show = group.add_parser("show", help="print an enabled skill as the `skill` tool returns it")
    show.add_argument("name")
    show.set_defaults(handler=show_skill)
    folders = group.add_parser("folders", help="list the discovery folders")
    folders.set_defaults(handler=list_folders)
    add = group.add_parser("add-folder", help="add a discovery folder")
    add.add_argument("path")
    add.set_defaults(handler=lambda args, app: _folder(app, args.path, add=True))
    remove = group.add_parser("remove-folder", help="remove a discovery folder (no files are deleted)")
    remove.add_argument("path")
    remove.set_defaults(handler=lambda args, app: _folder(app, args.path, add=False))


def _one_line(text: str, width: int = 100) -> str:
    line = " ".join(text.split())
    return line if len(line) <= width else line[: width - 1] + "…"


def list_skills(args: argparse.Namespace, app: App) -> int:
    skills = app.skills.list()
    problems = app.skills.problems()
    if getattr(args, "json", False):
        print(json.dumps({
            "skills": [{"name": s.name, "enabled": s.enabled, "active": s.active, "conflict": s.conflict or None,
                        "folder": str(s.folder), "path": str(s.path), "origin": s.origin,
                        "source": "user" if s.origin == "settings" else s.origin,
                        "description": s.description} for s in skills],
            "problems": problems,
        }, indent=2, ensure_ascii=False))
        return 0
    if not skills:
        print("No skills found.")
    else:
        width = max(len(s.name) for s in skills)
        groups: dict[str, list[Skill]] = {}
        for s in skills:
            groups.setdefault(s.origin, []).append(s)
        for n, (origin, members) in enumerate(sorted(groups.items(), key=lambda kv: (kv[0] != "settings", kv[0]))):
            if origin != "settings":  # a plugin source, shown apart from the user's folders
                print(f"{'' if n == 0 else chr(10)}From {origin} (a plugin source; disable its skills here, or the plugin):")
            print(f"{'NAME':<{width}}  ENABLED  FOLDER / DESCRIPTION")
            for s in members:
                state = "conflict" if s.enabled and s.conflict else ("yes" if s.enabled else "no")
                print(f"{s.name:<{width}}  {state:<7}  {s.folder}")
                print(f"{'':<{width}}           {_one_line(s.description)}")
    if problems:
        print("\nProblems:")
        for problem in problems:
            print(f"- {problem}")
    return 0


def set_enabled(args: argparse.Namespace, app: App, enabled: bool) -> int:
    from ..errors import UserFacingError

    state = "enabled" if enabled else "disabled"
    if args.source:
        count = app.skills.set_source_enabled(args.source, enabled)
        print(f"{args.source}: {count} skill(s) {state}")
        return 0
    if not args.name:
        raise UserFacingError("Name a skill, or a plugin source with --source plugin:NAME.")
    app.skills.set_enabled(args.name, enabled)
    print(f"{args.name}: {state}")
    return 0


def show_skill(args: argparse.Namespace, app: App) -> int:
    from ..errors import UserFacingError

    skill = app.skills.find_enabled(args.name)
    if skill is None:
        raise UserFacingError(f'Skill "{args.name}" not found.', hint="Run `llmspace skills list` to see enabled skills.")
    print(f"Base directory for this skill: {skill.path}\n\n{skill.body()}")
    return 0


def list_folders(args: argparse.Namespace, app: App) -> int:
    for path, origin, hidden in app.skills.folders():
        extra = f"  (hidden: {', '.join(sorted(hidden))})" if hidden else ""
        source = "" if origin == "settings" else f"  [{origin}]"
        print(f"{path}{'' if path.is_dir() else '  (missing)'}{source}{extra}")
    return 0


def _folder(app: App, path: str, *, add: bool) -> int:
    if add:
        app.skills.settings.add_folder(path)
        print(f"added {path}")
    else:
        from ..errors import UserFacingError

        configured = [f.path for f in app.skills.settings.folders()]
        owner = app.skills.plugin_folder(path.strip())
        if owner is not None and path.strip() not in configured:
            plugin = owner.removeprefix("plugin:")
            raise UserFacingError(f"{path!r} is the skill folder of {owner}; plugin skill sources cannot be removed.",
                                  hint=f"Disable its skills with `llmspace skills disable --source {owner}`, or the plugin "
                                       f"with `llmspace plugins disable {plugin}`.")
        if path.strip() not in configured:
            raise UserFacingError(f"{path!r} is not a configured skill folder; nothing was removed.",
                                  hint="Configured: " + (", ".join(configured) or "none") + " (see `llmspace skills folders`).")
        app.skills.settings.remove_folder(path)
        print(f"removed {path}")
    return 0
