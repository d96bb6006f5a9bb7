"""Dev mode (`llmspace plugins dev`, llmspace/plugins/dev.py): a plugin folder outside the data
root served in place, a changed tool file used by the next call in this process and in
another CLI process, a syntax error shown with file and line while the previous version
keeps answering, an installed plugin shadowed, and nothing left behind when it stops."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from llmspace.app import App
from llmspace.paths import DataRoot
from llmspace.plugins.dev import DevEntry, DevFollower, DevSession, add_entry, dev_file, read_entries
from llmspace.presenters.plugins_page import PluginsPagePresenter

from .builders import make_plugin

ROOT = Path(__file__).resolve().parents[2]
WAIT = 60.0


def tool(version: str) -> str:
    return f'''
class Echo:
    name = "echo"
    description = "Echo the text with the version."
    parameters = {{"type": "object", "properties": {{"text": {{"type": "string"}}}}, "required": ["text"]}}

    def execute(self, context, args):
        return "{version}: " + args["text"]
'''


def dev_folder(tmp_path: Path, version: str = "v1", name: str = "echo-kit") -> Path:
    folder = tmp_path / "src" / "my-echo"
    (folder / "tools").mkdir(parents=True)
    (folder / "package.json").write_text(json.dumps({"name": name, "version": "0.1.0",
                                                     "engines": {"llm-space": ">=4.9.0"}}))
    (folder / "tools" / "echo.py").write_text(tool(version))
    return folder


def save(path: Path, text: str) -> None:
    """Write `text` with a modification time the watcher cannot miss (a later second)."""
    before = path.stat().st_mtime_ns
    path.write_text(text)
    os.utime(path, ns=(before + 1_000_000_000, before + 1_000_000_000))


def call(app: App, text: str = "hi") -> str:
    answer = app.plugin_code.call("echo-kit", "python", "tool", "echo", "execute", {"arguments": {"text": text}}, {},
                                  timeout=WAIT, cancel=None)
    return str(answer["value"])


def cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "LLM_SPACE_HOME": str(home), "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "llmspace", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=180)


def files_of(home: Path) -> dict[str, bytes]:
    return {str(p.relative_to(home)): p.read_bytes() for p in sorted(home.rglob("*")) if p.is_file()
            and p.relative_to(home).parts[0] != "logs"}


def test_an_edited_tool_is_used_by_the_next_call_here_and_in_another_cli_process(home: Path, tmp_path: Path) -> None:
    folder = dev_folder(tmp_path)
    app = App(DataRoot(home))
    lines: list[str] = []
    session = DevSession(app, folder, out=lines.append)
    try:
        record = session.start()
        assert record.dev and record.folder == folder.resolve()
        assert call(app) == "v1: hi"
        other = cli(home, "plugins", "call-tool", "echo-kit", "echo", '{"text": "there"}')
        assert other.returncode == 0 and "v1: there" in other.stdout, other.stdout + other.stderr
        save(folder / "tools" / "echo.py", tool("v2"))
        t0 = time.monotonic()
        assert session.poll() is True
        assert call(app) == "v2: hi"
        took = time.monotonic() - t0
        assert took < 5.0, f"the reload and the next call took {took:.2f} s"  # ~0.3 s here; 1 s is the goal
        other = cli(home, "plugins", "call-tool", "echo-kit", "echo", '{"text": "there"}')
        assert "v2: there" in other.stdout, other.stdout + other.stderr
        assert any("reloaded in" in line and "tools/echo.py" in line for line in lines)
    finally:
        session.stop()
        app.close()


def test_a_syntax_error_names_file_and_line_and_the_previous_version_keeps_answering(home: Path, tmp_path: Path) -> None:
    folder = dev_folder(tmp_path)
    app = App(DataRoot(home))
    lines: list[str] = []
    session = DevSession(app, folder, out=lines.append)
    try:
        session.start()
        assert call(app) == "v1: hi"
        save(folder / "tools" / "echo.py", tool("v2").replace("def execute(self, context, args):",
                                                              "def execute(self, context, args)"))
        assert session.poll() is False
        shown = "\n".join(lines)
        assert f"{folder / 'tools' / 'echo.py'}:7: SyntaxError" in shown, shown
        assert "the previous version keeps running" in shown
        assert call(app) == "v1: hi"
        save(folder / "tools" / "echo.py", tool("v3"))
        assert session.poll() is True and call(app) == "v3: hi"
    finally:
        session.stop()
        app.close()


def test_stopping_leaves_the_data_root_as_it_was(home: Path, tmp_path: Path) -> None:
    folder = dev_folder(tmp_path)
    app = App(DataRoot(home))
    app.plugins.records()
    before = files_of(home)
    session = DevSession(app, folder, out=lambda _line: None)
    session.start()
    assert dev_file(app.root).is_file()
    assert call(app) == "v1: hi"
    session.stop()
    assert [r.key for r in app.plugins.records()] == []
    app.close()
    assert files_of(home) == before


def test_a_dev_plugin_shadows_the_installed_one_and_is_marked_dev_in_list_and_info(home: Path, tmp_path: Path) -> None:
    make_plugin(home, "echo-kit", engines=">=4.9.0", files={"tools/echo.py": tool("installed")})
    folder = dev_folder(tmp_path)
    app = App(DataRoot(home))
    session = DevSession(app, folder, out=lambda _line: None)
    try:
        session.start()
        assert call(app) == "v1: hi"
        listed = cli(home, "plugins", "list")
        assert "active (dev)" in listed.stdout, listed.stdout + listed.stderr
        info = cli(home, "plugins", "info", "echo-kit")
        assert str(folder.resolve()) in info.stdout and "(dev:" in info.stdout
        assert [r.version_text for r in PluginsPagePresenter(app).rows()] == ["0.1.0 (dev)"]
    finally:
        session.stop()
    assert call(app) == "installed: hi"
    app.close()


def test_entries_of_ended_processes_are_dropped(home: Path, tmp_path: Path) -> None:
    root = DataRoot(home)
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait(WAIT)
    add_entry(root, DevEntry("echo-kit", dev_folder(tmp_path), gone.pid))
    assert read_entries(root) == []
    assert [r.key for r in App(root).plugins.records()] == []


def test_a_running_app_follows_a_dev_plugin_of_another_process(home: Path, tmp_path: Path) -> None:
    folder = dev_folder(tmp_path)
    dev_app, app = App(DataRoot(home)), App(DataRoot(home))
    follower = DevFollower(app)
    session = DevSession(dev_app, folder, out=lambda _line: None)
    try:
        follower.step()
        session.start()
        follower.step()
        assert call(app) == "v1: hi"
        save(folder / "tools" / "echo.py", tool("v2"))
        follower.step()
        assert call(app) == "v2: hi"
    finally:
        session.stop()
        follower.close()
        dev_app.close()
        app.close()


def test_the_dev_command_serves_until_ctrl_c_and_leaves_nothing_installed(home: Path, tmp_path: Path) -> None:
    folder = dev_folder(tmp_path)
    env = {**os.environ, "LLM_SPACE_HOME": str(home), "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "llmspace", "plugins", "dev", str(folder)], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert proc.stdout is not None
    try:
        first = proc.stdout.readline()
        assert "watching for changes" in first, first
        other = cli(home, "plugins", "call-tool", "echo-kit", "echo", '{"text": "there"}')
        assert "v1: there" in other.stdout, other.stdout + other.stderr
        proc.send_signal(signal.SIGINT)
        assert proc.wait(WAIT) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
    assert not dev_file(DataRoot(home)).exists()
    assert "No plugins installed" in cli(home, "plugins", "list").stdout


def test_with_install_the_last_version_is_installed_when_dev_mode_ends(home: Path, tmp_path: Path) -> None:
    folder = dev_folder(tmp_path)
    env = {**os.environ, "LLM_SPACE_HOME": str(home), "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "llmspace", "plugins", "dev", str(folder), "--install"], cwd=ROOT,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert proc.stdout is not None
    try:
        assert "watching for changes" in proc.stdout.readline()
        proc.send_signal(signal.SIGINT)
        rest = proc.stdout.read()
        assert proc.wait(WAIT) == 0, rest
    finally:
        if proc.poll() is None:
            proc.kill()
    assert "Installed echo-kit 0.1.0" in rest, rest
    assert (home / "plugins" / "echo-kit" / "tools" / "echo.py").read_text() == tool("v1")
    assert "v1: there" in cli(home, "plugins", "call-tool", "echo-kit", "echo", '{"text": "there"}').stdout
