"""A plugin host's stderr and memory are bounded: a stderr line is cut at 64 KiB, at most
64 KiB a second is kept (the rest is logged as `[N bytes dropped]`), the Python host runs
under `RLIMIT_AS`, every host's process tree is stopped above `hostMemoryMB`
(settings/plugin-hosts.json) and Node gets `--max-old-space-size`."""

from __future__ import annotations

import json
import re
import shutil
import sys
import threading
import time
from pathlib import Path

import pytest

from llmspace.app import App
from llmspace.plugins.hosts.connection import HostConnection
from llmspace.plugins.hosts.js_runtime import find_runtime
from llmspace.plugins.hosts.stderr import LINE_CAP, RATE

from ..builders import make_plugin
from ..code_plugins import call_plugin_tool as _call
from ..code_plugins import code_plugin
from ..conformance.conftest import BUN_CACHED, NODE22_CACHED, absent

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the limits use Linux's /proc")


class _Lines:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.changed = threading.Condition()

    def add(self, text: str) -> None:
        with self.changed:
            self.lines.append(text)
            self.changed.notify_all()

    def wait_for(self, text: str, seconds: float = 60.0) -> bool:
        with self.changed:
            return self.changed.wait_for(lambda: any(text in line for line in self.lines), seconds)


def _connection(tmp_path: Path, program: str, lines: _Lines) -> HostConnection:
    conn = HostConnection([sys.executable, "-c", program], cwd=tmp_path, env={"PATH": "/usr/bin:/bin"},
                          label="noisy (python)", on_request=lambda m, p: None, on_output=lines.add)
    conn.start()
    return conn


def test_a_stderr_line_without_end_is_cut_at_64_kib_and_the_rest_counted_as_dropped(tmp_path: Path) -> None:
    program = ("import os, sys\nchunk = b'x' * (1 << 20)\nfor _ in range(40):\n    os.write(2, chunk)\n"
               "os.write(2, b'\\nafter\\n')\nsys.stdin.read()\n")
    lines = _Lines()
    conn = _connection(tmp_path, program, lines)
    try:
        assert lines.wait_for("after")
    finally:
        conn.close(shutdown_wait=0.1)
    assert max(len(line) for line in lines.lines) <= LINE_CAP + 1
    dropped = [int(m.group(1)) for line in lines.lines if (m := re.search(r"\[(\d+) bytes dropped\]", line))]
    assert sum(dropped) >= 40 * (1 << 20) - LINE_CAP


def test_stderr_keeps_at_most_64_kib_a_second_and_logs_what_it_dropped(tmp_path: Path) -> None:
    program = ("import os, sys\nline = b'y' * 1023 + b'\\n'\nfor _ in range(4096):\n    os.write(2, line)\n"
               "os.write(2, b'done\\n')\nsys.stdin.read()\n")
    lines = _Lines()
    started = time.monotonic()
    conn = _connection(tmp_path, program, lines)
    try:
        assert lines.wait_for("bytes dropped") or lines.wait_for("done")
        elapsed = time.monotonic() - started
    finally:
        conn.close(shutdown_wait=0.1)
    kept = sum(len(line) for line in lines.lines if line.startswith("y"))
    assert kept <= RATE * (elapsed + 1) + LINE_CAP, f"{kept} bytes kept in {elapsed:.1f} s"
    assert any("bytes dropped" in line for line in lines.lines)


def _limit(home: Path, mb: int) -> None:
    (home / "settings").mkdir(exist_ok=True)
    (home / "settings" / "plugin-hosts.json").write_text(json.dumps({"hostMemoryMB": mb}))


HOG = '''
class Hog:
    name = "hog"
    description = "Allocates 400 MB at once."
    parameters = {"type": "object"}
    def execute(self, context, args):
        return len(bytearray(400 * 1024 * 1024))
'''

JS_HOG = '''
export default class Hog {
  name = "js_hog";
  description = "Keeps allocating until it is stopped.";
  parameters = {type: "object"};
  async execute(context, args) {
    if (args.flags) return process.execArgv;
    const keep = [];
    for (;;) {
      keep.push(Buffer.alloc(16 * 1024 * 1024, 1));
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}
'''


def test_the_python_host_runs_under_rlimit_as_of_the_memory_setting(app: App, home: Path) -> None:
    _limit(home, 256)
    code_plugin(home, tools={"hog": HOG})
    app.plugins.refresh()
    out = _call(app, "hog", {})
    assert out.isError is True and "MemoryError" in out.text()


def _js_app(app: App, exe: Path | str | None, what: str) -> App:
    if exe is None or not Path(exe).exists():
        absent(f"{what} is not installed (.ci/run installs it into .cache/js)")
    runtime = find_runtime(None, {"PATH": str(Path(str(exe)).parent)})
    app.plugin_code.js_runtime = lambda: runtime
    return app


def test_a_js_host_whose_process_tree_passes_the_limit_is_stopped_naming_it(app: App, home: Path) -> None:
    _js_app(app, shutil.which("bun") or BUN_CACHED, "Bun")
    _limit(home, 256)
    make_plugin(home, "js-kit", engines=">=4.9.0", files={"tools/hog.mjs": JS_HOG})
    app.plugins.refresh()
    out = _call(app, "js_hog", {})
    assert out.isError is True and "plugin host exceeded 256 MB" in out.text()


def test_node_hosts_get_max_old_space_size_of_the_memory_setting(app: App, home: Path) -> None:
    _js_app(app, NODE22_CACHED, "Node 22")
    _limit(home, 300)
    make_plugin(home, "js-kit", engines=">=4.9.0", files={"tools/hog.mjs": JS_HOG})
    app.plugins.refresh()
    assert "--max-old-space-size=300" in json.loads(_call(app, "js_hog", {"flags": True}).text())


# A confined plugin's temp folder (its TMPDIR, cache/plugin-tmp/<name>/) has a quota,
# `hostTempMB`, and is emptied when its host ends (issue 35: 2 GB in 3 s, left after the end).
FILLER = '''
import os

class Filler:
    name = "filler"
    description = "Writes files into its temp folder."
    parameters = {"type": "object"}
    def execute(self, context, args):
        folder = os.environ["TMPDIR"]
        written = 0
        try:
            for k in range(int(args.get("files", 1))):
                with open(os.path.join(folder, f"fill-{k}.bin"), "wb") as f:
                    for _ in range(int(args.get("mb", 1))):
                        f.write(b"x" * (1 << 20))
                        written += 1
        except OSError as exc:
            error = f"{type(exc).__name__}: {exc.strerror}"
        else:
            error = ""
        if args.get("clean"):
            for name in os.listdir(folder):
                os.unlink(os.path.join(folder, name))
        return {"pid": os.getpid(), "written": written, "error": error}
'''


def _confined_filler(home: Path, temp_mb: int) -> Path:
    (home / "settings").mkdir(exist_ok=True)
    (home / "settings" / "plugin-hosts.json").write_text(json.dumps({"hostTempMB": temp_mb}))
    code_plugin(home, tools={"filler": FILLER}, llmSpace={"capabilities": []})
    return home / "cache" / "plugin-tmp" / "kit"


def _emptied_within(folder: Path, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    pause = threading.Event()
    while any(folder.iterdir()):
        if time.monotonic() >= deadline:
            return False
        pause.wait(0.05)
    return True


def test_what_a_plugin_leaves_in_its_temp_folder_is_gone_once_its_host_ended(app: App, home: Path) -> None:
    temp = _confined_filler(home, 64)
    app.plugins.refresh()
    out = json.loads(_call(app, "filler", {"files": 2, "mb": 1}).text())
    assert out["error"] == "" and len(list(temp.iterdir())) >= 2
    assert app.plugin_code.close() == []
    assert list(temp.iterdir()) == []


def test_one_file_cannot_grow_past_the_temp_quota(app: App, home: Path) -> None:
    _confined_filler(home, 64)
    app.plugins.refresh()
    out = json.loads(_call(app, "filler", {"files": 1, "mb": 100, "clean": True}).text())
    assert out["written"] == 64 and "File too large" in out["error"], out


def test_a_temp_folder_over_its_quota_stops_the_host_and_is_emptied(app: App, home: Path) -> None:
    temp = _confined_filler(home, 64)
    app.plugins.refresh()
    out = _call(app, "filler", {"files": 10, "mb": 10})
    # The watch looks every second: the host may be stopped while the call still writes.
    assert _emptied_within(temp, 30.0), sorted(p.name for p in temp.iterdir())
    again = json.loads(_call(app, "filler", {"files": 1, "mb": 1}).text())
    assert again["error"] == ""
    if out.isError:
        assert "more than its 64 MB" in out.text() and "hostTempMB" in out.text(), out.text()
    else:
        assert json.loads(out.text())["written"] == 100
        assert again["pid"] != json.loads(out.text())["pid"]  # the host was stopped; this call started another
