"""CLI command group `local`: the built-in llama.cpp engine and its models (see llmspace/cli.py).

  llmspace local models [--json]                  the catalog and the installed models, with sizes
  llmspace local pull NAME | ORG/REPO/FILE[@REVISION] [--sha256 HEX] [--name NAME]
                                                  download from the Hugging Face Hub (HF_ENDPOINT,
                                                  HF_TOKEN), with progress; resumes a killed download
  llmspace local add PATH [--name NAME] [--copy]  add a GGUF file in place (or copy it in)
  llmspace local remove NAME                      forget a model; deletes only files we downloaded or copied
  llmspace local status                           the engine: pid, port, model loaded, memory
  llmspace local stop                             stop the engine
Models: llmspace/local/models.py and download.py; the engine: llmspace/local/engine.py.
Models of a running Ollama or LM Studio are listed by `llmspace models`, as before.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from ..errors import UserFacingError
from .parsers import help_handler

if TYPE_CHECKING:
    from ..app import App
    from ..local.download import Progress

_BAR = 28


def _duration(seconds: float) -> str:
    seconds = max(0, round(seconds))
    if seconds < 60:
        return f"{seconds} s"
    minutes, secs = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes} min {secs:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


class ProgressBar:
    """Size, speed and time left on stderr: a redrawn bar on a terminal, a line a second otherwise."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self._last = 0.0
        self._drawn = False

    def note(self, text: str) -> None:
        self._end_line()
        print(text, file=self.stream, flush=True)

    def progress(self, p: Progress) -> None:
        from ..local.models import human_size

        now = time.monotonic()
        final = p.done >= p.total
        if not final and now - self._last < (0.2 if self.tty else 1.0) and self._last:
            return
        self._last = now
        share = p.done / p.total if p.total else 1.0
        left = "" if final else (f"  {_duration(p.eta)} left" if p.eta is not None else "  time left unknown")
        text = (f"{share * 100:5.1f}%  {human_size(p.done)} / {human_size(p.total)}  "
                f"{human_size(p.speed)}/s{left}")
        if self.tty:
            filled = int(share * _BAR)
            print(f"\r[{'#' * filled}{'.' * (_BAR - filled)}] {text}\x1b[K", end="", file=self.stream, flush=True)
            self._drawn = True
            if final:
                self._end_line()
        else:
            print(text, file=self.stream, flush=True)

    def _end_line(self) -> None:
        if self._drawn:
            print(file=self.stream, flush=True)
            self._drawn = False


class _HashProgress:
    """Adapts (done, total) callbacks of hashing or copying to the progress bar."""

    def __init__(self, bar: ProgressBar) -> None:
        self.bar = bar
        self.began = time.monotonic()

    def __call__(self, done: int, total: int) -> None:
        from ..local.download import Progress

        speed = done / max(time.monotonic() - self.began, 1e-6)
        self.bar.progress(Progress(done=done, total=total, speed=speed,
                                   eta=(total - done) / speed if speed else None, resumed_from=0))


def _models(app: App) -> Any:
    from ..local.models import LocalModels

    return LocalModels(app.root)


def _use_hint(name: str, path: Path) -> str:
    """How to use an installed model: as a chat model, or (an embedding model: pooling, no chat
    template) as the embedder of `similar` assertions."""
    from ..local.gguf_meta import read_metadata

    meta = read_metadata(path, keys=None)
    if not meta.get("tokenizer.chat_template") and f"{meta.get('general.architecture')}.pooling_type" in meta:
        return f"It is an embedding model: use it with `llmspace eval run FILE --embedder local/{name}`."
    return f"Use it with `llmspace run THREAD --provider local --model {name}`."


def _table(rows: list[tuple[str, ...]]) -> None:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        print("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())


def cmd_models(args: argparse.Namespace, app: App) -> int:
    from ..local import catalog
    from ..local.models import human_size

    models = _models(app)
    installed = models.installed()
    by_sha = {m.sha256: m for m in installed}
    if args.json:
        print(json.dumps({
            "catalog": [{"name": e.name, "repo": e.repo, "file": e.file, "revision": e.revision, "size": e.size,
                         "licence": e.licence, "contextWindow": e.context_window, "sha256": e.sha256,
                         "toolCalls": e.tool_calls, "default": e.default, "note": e.note,
                         "installedAs": by_sha[e.sha256].name if e.sha256 in by_sha else None}
                        for e in catalog.CATALOG],
            "installed": [m.to_json() for m in installed],
        }, indent=2, ensure_ascii=False))
        return 0
    print("Catalog (download with `llmspace local pull NAME`):")
    rows: list[tuple[str, ...]] = [("  NAME", "SIZE", "CONTEXT", "LICENCE", "TOOL CALLS", "")]
    for e in catalog.CATALOG:
        mark = "* " if e.default else "  "
        have = f"installed as {by_sha[e.sha256].name}" if e.sha256 in by_sha else ""
        rows.append((mark + e.name, human_size(e.size) if e.size else "?", f"{e.context_window:,}", e.licence,
                     e.tool_calls, have))
    _table(rows)
    print("  * the default. On the Hugging Face Hub:")
    for e in catalog.CATALOG:
        print(f"    {e.name}: {e.repo}/{e.file}@{e.revision}, SHA-256 {e.sha256 or 'not known here'}")
    notes = sorted({e.note for e in catalog.CATALOG if e.note})
    for note in notes:
        print(f"  Note: {note}.")
    print()
    if not installed:
        print("No model installed. Get one with `llmspace local pull "
              f"{catalog.default_entry().name}` or add a GGUF file with `llmspace local add PATH`.")
    else:
        print(f"Installed (in {models.folder}):")
        rows = [("  NAME", "SIZE", "ORIGIN", "FILE")]
        for m in installed:
            gone = "" if m.path.exists() else "  (file missing)"
            rows.append(("  " + m.name, human_size(m.size), m.origin, f"{m.path}{gone}"))
        _table(rows)
    partial = models.partial_downloads()
    if partial:
        print("\nStopped downloads (the same `llmspace local pull` resumes them; delete the file to drop one):")
        for repo, path, size in partial:
            print(f"  {repo}: {human_size(size)} in {path}")
    print("\nModels of a running Ollama or LM Studio are listed by `llmspace models`.")
    return 0


def cmd_pull(args: argparse.Namespace, app: App) -> int:
    from ..local import download
    from ..local.models import human_size

    hub_file = download.parse_spec(args.spec, sha256=args.sha256, name=args.name)
    bar = ProgressBar()
    try:
        model, already = download.pull(_models(app), hub_file, bar)
    except KeyboardInterrupt:
        bar.note("Stopped. Run the same command again to resume the download where it stopped.")
        raise
    if already:
        print(f"{model.name} is already installed ({model.path}).")
    else:
        print(f"Installed {model.name} ({human_size(model.size)}, SHA-256 {model.sha256}) at {model.path}.")
    print(_use_hint(model.name, model.path))
    return 0


def cmd_add(args: argparse.Namespace, app: App) -> int:
    from ..local.models import human_size

    bar = ProgressBar()
    bar.note(f"Checking {args.path} (SHA-256{', then copying' if args.copy else ''})…")
    model = _models(app).add(Path(args.path), name=args.name, copy=args.copy, progress=_HashProgress(bar))
    where = "copied to" if model.origin == "copied" else "in place at"
    entry = model.catalog_entry
    known = f"; it is the catalog's {entry.name}" if entry is not None else ""
    print(f"Added {model.name} ({human_size(model.size)}), {where} {model.path}{known}.")
    print(_use_hint(model.name, model.path))
    return 0


def cmd_remove(args: argparse.Namespace, app: App) -> int:
    model, deleted = _models(app).remove(args.name)
    if model.origin == "in-place":
        print(f"Removed {model.name}; its file was added in place and stays where it is: {model.path}.")
    elif not deleted:
        print(f"Removed {model.name}; no file deleted (another installed model uses the same file, "
              "or it was already gone).")
    else:
        print(f"Removed {model.name} and deleted {len(deleted)} file(s) we {model.origin} "
              f"({', '.join(str(p) for p in deleted)}).")
    return 0


def _engine() -> Any:
    try:
        return importlib.import_module("llmspace.local.engine")
    except ImportError as exc:
        raise UserFacingError(f"The built-in engine is not available here ({exc}).",
                              hint="Install the app with its engine: `pip install llmspace[local]`.") from None


def _field(status: Any, *names: str) -> Any:
    for name in names:
        value = getattr(status, name, None)
        if value is not None:
            return value
    return None


def cmd_status(args: argparse.Namespace, app: App) -> int:
    from ..local.models import human_size

    status = _engine().engine_status(app.root)
    if status is None:
        print("The built-in engine is not running. It starts on the first run with `--provider local`.")
        return 0
    now = time.time()
    model = _field(status, "model_name", "model")
    path = _field(status, "model_path")
    rss = _field(status, "rss_bytes")
    started = _field(status, "started_at")
    used = _field(status, "last_used")
    print(f"The built-in engine is running: pid {status.pid}, port {status.port} on 127.0.0.1.")
    print(f"  Model: {model or 'none loaded'}{f' ({path})' if path else ''}")
    print(f"  Memory: {human_size(rss) if rss is not None else 'unknown'}")
    context = _field(status, "context_size")
    if context:
        print(f"  Context: {int(context):,} tokens")
    if started is not None:
        print(f"  Started: {_duration(now - float(started))} ago")
    if used is not None:
        print(f"  Last used: {_duration(now - float(used))} ago")
    idle = _field(status, "idle_seconds")
    if idle:
        print(f"  Stops after {_duration(float(idle))} unused (or with `llmspace local stop`)")
    return 0


def cmd_stop(args: argparse.Namespace, app: App) -> int:
    stopped = _engine().stop_engine(app.root, timeout=10.0)
    print("Stopped the built-in engine." if stopped else "The built-in engine was not running.")
    return 0


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `llmspace local …`."""
    p = sub.add_parser("local", help="the built-in llama.cpp engine and its models: models, pull, add, remove, "
                                     "status, stop")
    lsub = p.add_subparsers(dest="local_command", metavar="ACTION")
    p.set_defaults(handler=help_handler(p))

    q = lsub.add_parser("models", help="the catalog and the installed models, with sizes")
    q.add_argument("--json", action="store_true", help="print them as JSON")
    q.set_defaults(handler=cmd_models)

    q = lsub.add_parser("pull", help="download a model from the Hugging Face Hub (resumes a stopped download)")
    q.add_argument("spec", metavar="NAME|ORG/REPO/FILE[@REVISION]",
                   help="a catalog name (see `local models`) or a file of a Hub repository")
    q.add_argument("--sha256", metavar="HEX", help="the file's expected SHA-256 (else the catalog's or the Hub's)")
    q.add_argument("--name", help="the name to run it by (default: the catalog name or the file name)")
    q.set_defaults(handler=cmd_pull)

    q = lsub.add_parser("add", help="add a GGUF file you have (in place, or copied with --copy)")
    q.add_argument("path")
    q.add_argument("--name", help="the name to run it by (default: from the file name)")
    q.add_argument("--copy", action="store_true", help="copy the file into the data root's models/ folder")
    q.set_defaults(handler=cmd_add)

    q = lsub.add_parser("remove", help="forget a model; deletes only files we downloaded or copied")
    q.add_argument("name")
    q.set_defaults(handler=cmd_remove)

    q = lsub.add_parser("status", help="the engine: pid, port, model loaded, memory")
    q.set_defaults(handler=cmd_status)

    q = lsub.add_parser("stop", help="stop the built-in engine")
    q.set_defaults(handler=cmd_stop)
