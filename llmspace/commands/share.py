"""CLI command groups `auth` and `share` (see llmspace/cli.py): sharing threads as secret GitHub
gists, as the original app does (`llmspace/share/`).

  llmspace auth login [--no-browser]    sign in with GitHub (device flow: enter the printed code
                                        on the printed page; Ctrl-C cancels)
  llmspace auth status                  who is signed in, and where the token is kept
  llmspace auth logout                  sign out (the token is deleted)
  llmspace share publish THREAD [--title T] [--description D] [--yes]
                                        show what will be shared, ask, then make a new secret gist
                                        and print its llm-space:// link and the web viewer's link
  llmspace share list [--json]          what was shared from this data root
  llmspace share revoke ID              delete the gist (the links stop working) and its entry

Opening a shared link is `llmspace open-url llm-space://shared/gist/threads/<id>`
(`commands/storage.py` routes it here, `open_shared`).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING

from ..core.names import shown_name
from .parsers import help_handler

if TYPE_CHECKING:
    from ..app import App
    from ..share.auth import SignInEvent


def _print_event(event: SignInEvent, open_browser: bool) -> None:
    if event.kind == "code":
        print(f"Enter the code {event.user_code} at {event.verification_uri}", flush=True)
        print(f"(the code expires in {event.expires_in / 60:.0f} min; Ctrl-C cancels)", flush=True)
        if open_browser:
            import webbrowser

            try:
                webbrowser.open(event.verification_uri)
            except Exception:  # no browser: the printed address is enough
                pass
    elif event.kind == "slow_down":
        print(f"GitHub asked to poll less often: every {event.interval:g} s.", flush=True)
    elif event.kind == "signed_in":
        print(f"Signed in to GitHub as {event.login}.", flush=True)


def cmd_login(args: argparse.Namespace, app: App) -> int:
    from .plugin_code import until_done

    sharing = app.sharing
    until_done(lambda cancel: sharing.sign_in(lambda e: _print_event(e, not args.no_browser), cancel))
    print(f"The token is kept in {sharing.auth.where}.")
    return 0


def cmd_status(args: argparse.Namespace, app: App) -> int:
    record = app.sharing.status()
    if record is None:
        print("Not signed in to GitHub (llmspace auth login signs in).")
        return 1
    email = record.user.get("email")
    print(f"Signed in to GitHub as {record.login or '(unknown account)'}" + (f" <{email}>" if email else "")
          + f"; scope: {record.scope or '(none)'}; token kept in {app.sharing.auth.where}.")
    return 0


def cmd_logout(args: argparse.Namespace, app: App) -> int:
    if app.sharing.sign_out():
        print("Signed out of GitHub; the token was deleted from this computer.")
        print("To revoke it on GitHub too: Settings › Applications › Authorized OAuth Apps.")
    else:
        print("Not signed in to GitHub.")
    return 0


def cmd_publish(args: argparse.Namespace, app: App) -> int:
    from ..errors import UserFacingError
    from .plugin_code import until_done
    from .run import thread_path

    _ = app.models  # the configured keys become known, so a variable holding one is flagged
    rel = thread_path(app, args.thread)
    sharing = app.sharing
    if sharing.status() is None:
        raise UserFacingError("Sharing needs a GitHub sign-in.", hint="Sign in first: llmspace auth login.")
    summary = sharing.summary(rel, args.title, args.description)
    for line in summary.lines():
        print(line)
    if not args.yes:
        if not sys.stdin.isatty():
            raise UserFacingError("Not shared: confirm with --yes when there is no terminal to ask on.")
        answer = input("Share it as a secret gist? [y/N] ").strip().lower()
        if answer not in ("y", "yes"):
            print("Not shared.")
            return 1
    shared = until_done(lambda cancel: sharing.publish(rel, args.title, args.description, cancel))
    print(f"Shared as gist {shared.gist_id} ({shared.file_name}).")
    print(f"Link: {shared.link}")
    print(f"Web viewer (the original LLM Space project's): {shared.web_url}")
    return 0


def cmd_list(args: argparse.Namespace, app: App) -> int:
    entries = app.sharing.shares()
    if args.json:
        from dataclasses import asdict

        print(json.dumps([asdict(e) for e in entries], indent=2, ensure_ascii=False))
        return 0
    if not entries:
        print("Nothing shared from this data root yet (llmspace share publish THREAD).")
    for e in entries:
        print(f"{e.gistId}  {e.createdAt}  {shown_name(e.title)}  ({shown_name(e.thread)})")
    return 0


def cmd_revoke(args: argparse.Namespace, app: App) -> int:
    from .plugin_code import until_done

    deleted = until_done(lambda cancel: app.sharing.revoke(args.id, cancel))
    if deleted:
        print(f"Deleted gist {args.id}: its links no longer open.")
    else:
        print(f"Gist {args.id} was already gone from GitHub; its entry was removed.")
    return 0


def open_shared(app: App, url: str) -> int:
    """`llmspace open-url` for a `llm-space://shared/…` link: import it into shared/ and print
    its path, with `llmspace import`'s warnings."""
    from .importing import model_resolver
    from .plugin_code import until_done

    opened = until_done(lambda cancel: app.sharing.open_link(url, cancel, model_resolver(app)))
    print(shown_name(str(app.workspace.resolve(opened.rel))))
    for note in opened.notes:
        print(f"  note: {note}")
    for warning in opened.warnings:
        print(f"  warning: {warning}")
    return 0


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `auth …` and `share …`."""
    p = sub.add_parser("auth", help="GitHub sign-in for sharing: login, status, logout")
    asub = p.add_subparsers(dest="auth_command", metavar="ACTION")
    p.set_defaults(handler=help_handler(p))
    q = asub.add_parser("login", help="sign in with GitHub (device flow)")
    q.add_argument("--no-browser", action="store_true", help="print the page to open instead of opening it")
    q.set_defaults(handler=cmd_login)
    asub.add_parser("status", help="who is signed in").set_defaults(handler=cmd_status)
    asub.add_parser("logout", help="sign out and delete the token").set_defaults(handler=cmd_logout)

    p = sub.add_parser("share", help="share threads as secret GitHub gists: publish, list, revoke")
    ssub = p.add_subparsers(dest="share_command", metavar="ACTION")
    p.set_defaults(handler=help_handler(p))
    q = ssub.add_parser("publish", help="share a thread as a new secret gist")
    q.add_argument("thread", metavar="THREAD", help="workspace path of the thread")
    q.add_argument("--title", default=None, help="the shared title (default: the thread's)")
    q.add_argument("--description", default=None, help="the gist's description (default: the title)")
    q.add_argument("--yes", action="store_true", help="share without asking")
    q.set_defaults(handler=cmd_publish)
    q = ssub.add_parser("list", help="what was shared from this data root")
    q.add_argument("--json", action="store_true", help="print the list as JSON")
    q.set_defaults(handler=cmd_list)
    q = ssub.add_parser("revoke", help="delete a shared gist and its entry")
    q.add_argument("id", metavar="ID", help="the gist id (llmspace share list)")
    q.set_defaults(handler=cmd_revoke)
