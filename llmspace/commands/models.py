"""CLI command group `models` (see llmspace/cli.py for the contract).

  llmspace models [--refresh] [--json]   providers, their models, and whether each answers
                                         (key set / server reachable; base URLs with their
                                         passwords and query values masked); --refresh asks local
                                         and custom servers for their model lists now;
                                         providers of active plugins
                                         (plugin:NAME:model-provider:ID) come last
  llmspace ping PROVIDER/MODEL           one-line connection test: system "You are a
                                         connection tester.", user `Reply with "ok".`
Backed by `app.models` (`settings/models.py`) and `app.providers` (`providers/registry.py`).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import TYPE_CHECKING, Any

from ..errors import UserFacingError, redact
from ..redact import mask_url

if TYPE_CHECKING:
    from ..app import App
    from ..settings.provider_entries import ProviderView


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("models", help="list providers and models and whether each answers")
    p.add_argument("--refresh", action="store_true", help="ask local and custom servers for their models now")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(handler=cmd_models)
    q = sub.add_parser("ping", help="send a one-line connection test to PROVIDER/MODEL")
    q.add_argument("target", metavar="PROVIDER/MODEL")
    q.add_argument("--timeout", type=float, default=60.0, help="read timeout in seconds (default 60)")
    q.set_defaults(handler=cmd_ping)


def _probe(base_url: str, headers: dict[str, str], key: str | None, timeout: float = 2.0) -> tuple[bool, list[str], str]:
    """GET {base_url}/models: (answers, model ids, note)."""
    import requests

    from ..providers.http import CrossOriginRedirect, api_url, header_problem, new_session

    h = dict(headers)
    if key:
        h["Authorization"] = f"Bearer {key}"
    if (problem := header_problem(h)) is not None:
        return False, [], f"header {problem[0]!r} cannot be sent ({problem[1]!r} in an HTTP header)"
    try:
        with new_session() as session:  # a redirect to another origin is not followed (llmspace/origin.py)
            resp = session.get(api_url(base_url, "/models"), headers=h, timeout=(timeout, timeout))
    except CrossOriginRedirect as exc:
        return True, [], str(exc)  # "redirected to another origin http://host:port"
    except requests.RequestException:
        return False, [], "not reachable"
    if not resp.ok:
        return True, [], f"HTTP {resp.status_code}"
    try:
        data = resp.json().get("data") or []
        return True, [str(m.get("id")) for m in data if isinstance(m, dict) and m.get("id")], "reachable"
    except (ValueError, AttributeError):
        return True, [], "reachable"


def _status(app: App, view: ProviderView, probes: dict[str, tuple[bool, list[str], str]]) -> str:
    if view.id in probes:
        return probes[view.id][2]
    if view.local:
        return {True: "reachable", False: "not running", None: "not checked (use --refresh)"}[view.reachable]
    if view.needs_key:
        return "key set" if app.models.api_key(view.id) else f"no key (set {app.models.key_hint(view.id)})"
    return "custom"


def cmd_models(args: argparse.Namespace, app: App) -> int:
    settings = app.models
    if settings.load_error is not None:
        print(f"warning: {settings.load_error} Using the built-in providers.", file=sys.stderr)
    # local servers are asked every time (refused connections answer at once on 127.0.0.1)
    app.providers.refresh_local(None, timeout=1.0 if args.refresh else 0.3)  # providers/discovery.py
    plugin_views = app.providers.plugin_views()
    sources = {v.id: source for source, v in plugin_views}
    views = [*settings.providers(), *(v for _, v in plugin_views)]
    probes: dict[str, tuple[bool, list[str], str]] = {}
    if args.refresh:
        for v in views:
            if not v.builtin and v.base_url:
                key = v.api_key_setting if v.id in sources else settings.api_key(v.id)
                probes[v.id] = _probe(v.base_url, v.headers, key)
    default = settings.default_model
    out: list[dict[str, Any]] = []
    for v in views:
        models = [{"id": m.id, "name": m.name, "enabled": m.id not in v.disabled,
                   "default": bool(default and default.provider == v.id and default.id == m.id)} for m in v.models]
        known = {m["id"] for m in models}
        for extra in probes.get(v.id, (False, [], ""))[1]:
            if extra not in known:
                models.append({"id": extra, "name": extra, "enabled": True, "default": False, "listedOnly": True})
        plugin = sources.get(v.id)
        status = probes[v.id][2] if v.id in probes else (f"from {plugin}" if plugin else _status(app, v, probes))
        out.append({"id": v.id, "name": v.name, "api": v.api, "baseUrl": mask_url(v.base_url), "builtin": v.builtin,
                    "local": v.local, "status": status, "usable": bool(plugin) or settings.is_configured(v.id),
                    "source": plugin or ("built-in" if v.builtin else "user"), "models": models})
    if args.json:
        print(json.dumps(out, indent=2, ensure_ascii=False))
        return 0
    for p in out:
        print(f"{p['id']}  ({p['name']}, {p['api']}, {p['baseUrl']})  {p['status']}")
        if not p["models"]:
            print("    (no models)")
        for m in p["models"]:
            flags = [f for f, on in (("default", m["default"]), ("disabled", not m["enabled"]),
                                     ("listed by server, not configured", m.get("listedOnly"))) if on]
            print(f"    {p['id']}/{m['id']}" + (f"  [{', '.join(flags)}]" if flags else ""))
    return 0


def cmd_ping(args: argparse.Namespace, app: App) -> int:
    from dataclasses import replace

    from ..cancel import CancelToken
    from ..providers.base import ModelRequest, NeutralMessage
    from ..providers.events import ErrorEvent, Finish, TextDelta, ThinkingDelta, ToolCallStart
    from ..providers.progress import ProgressWatched

    provider, sep, model_id = args.target.partition("/")
    if not sep or not provider or not model_id:
        raise UserFacingError(f"Expected PROVIDER/MODEL, got {args.target!r}.", hint="For example: llmspace ping openai/gpt-4.1-mini")
    endpoint, info = app.providers.resolve(None, provider=provider, model_id=model_id)
    endpoint = replace(endpoint, read_timeout=args.timeout, progress_timeout=min(endpoint.progress_timeout, args.timeout))
    request = ModelRequest(endpoint=endpoint, model=info, system_prompt="You are a connection tester.",
                           messages=(NeutralMessage(role="user", text='Reply with "ok".'),))
    adapter = app.providers.adapter(endpoint.api)
    start = time.perf_counter()
    first: float | None = None
    text: list[str] = []
    error: ErrorEvent | None = None
    for event in ProgressWatched(adapter).stream(request, CancelToken()):  # keep-alives alone end it too
        if first is None and isinstance(event, (TextDelta, ThinkingDelta, ToolCallStart)):
            first = time.perf_counter() - start
        if isinstance(event, TextDelta):
            text.append(event.text)
        elif isinstance(event, ErrorEvent):
            error = event
        elif isinstance(event, Finish):
            break
    took = time.perf_counter() - start
    if error is not None:
        print(f"error: {provider}/{model_id}: {redact(error.message, [endpoint.api_key or ''])}", file=sys.stderr)
        return 1
    answer = " ".join("".join(text).split())[:80]
    ft = f", first token {first:.2f} s" if first is not None else ""
    print(f"ok: {provider}/{model_id} answered {answer!r} in {took:.2f} s{ft}")
    return 0
