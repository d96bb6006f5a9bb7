"""CLI command group `llmspace skills …` (see llmspace/cli.py for the contract).

`skills list` prints every discovered skill (name, enabled, folder, description) and then the
problems found; `skills enable NAME` / `skills disable NAME` switch a skill on or off;
`skills show NAME` prints what the `skill` tool returns; `skills folders`, `skills add-folder PATH`
and `skills remove-folder PATH` manage the discovery folders.
"""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING

from .parsers import help_handler

if TYPE_CHECKING:
    from ..app import App


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("skills", help="list, enable and disable Agent Skills")
    group = p.add_subparsers(dest="skills_command", metavar="SUBCOMMAND")
    p.set_defaults(handler=help_handler(p))

    ls = group.add_parser("list", help="list discovered skills and problems")
    ls.add_argument("--json", action="store_true", help="print JSON")
    ls.set_defaults(handler=list_skills)
    for verb, enabled in (("enable", True), ("disable", False)):
        cmd = group.add_parser(verb, help=f"{verb} a skill by name")
        cmd.add_argument("name")
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
            "skills": [{"name": s.name, "enabled": s.enabled, "folder": str(s.folder), "path": str(s.path),
                        "origin": s.origin, "description": s.description} for s in skills],
            "problems": problems,
        }, indent=2, ensure_ascii=False))
        return 0
    if not skills:
        print("No skills found.")
    else:
        width = max(len(s.name) for s in skills)
        print(f"{'NAME':<{width}}  ENABLED  FOLDER / DESCRIPTION")
        for s in skills:
            print(f"{s.name:<{width}}  {'yes' if s.enabled else 'no ':<7}  {s.folder}")
            print(f"{'':<{width}}           {_one_line(s.description)}")
    if problems:
        print("\nProblems:")
        for problem in problems:
            print(f"- {problem}")
    return 0


def set_enabled(args: argparse.Namespace, app: App, enabled: bool) -> int:
    app.skills.set_enabled(args.name, enabled)
    print(f"{args.name}: {'enabled' if enabled else 'disabled'}")
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
        configured = [f.path for f in app.skills.settings.folders()]
        if path.strip() not in configured:
            from ..errors import UserFacingError

            raise UserFacingError(f"{path!r} is not a configured skill folder; nothing was removed.",
                                  hint="Configured: " + (", ".join(configured) or "none") + " (see `llmspace skills folders`).")
        app.skills.settings.remove_folder(path)
        print(f"removed {path}")
    return 0
