"""Dev mode (`llmspace plugins dev`, llmspace/plugins/dev.py): a plugin folder outside the data
root served in place, a changed tool file used by the next call in this process and in
another CLI process, a syntax error shown with file and line while the previous version
keeps answering, an installed plugin shadowed, and nothing left behind when it stops; an
entry counts only while a `plugins dev` process serves it, run/ is owner-only, watching a
large folder costs little CPU and a folder too deep is refused (issue 35, items 8, 9, 17)."""

from __future__ import annotations

import json
import logging
import os
import resource
import signal
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from llmspace.app import App
from llmspace.errors import UserFacingError
from llmspace.paths import DataRoot
from llmspace.plugins.dev import DevFollower, DevSession
from llmspace.plugins.dev_entries import DevEntry, add_entry, dev_file, read_entries
from llmspace.plugins.errors import PluginError
from llmspace.plugins.hosts.host import CallFailed
from llmspace.presenters.plugins_page import PluginsPagePresenter
from tests.support.cli import cli_in_process

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


def wait_until(condition: Callable[[], object], what: str, timeout: float = WAIT) -> None:
    """Call `condition` until it is true (the OS reports a change within milliseconds; a
    loaded machine may take longer)."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"still waiting for {what} after {timeout:.0f} s"
        time.sleep(0.05)


def save(path: Path, text: str) -> None:
    """Write `text` with a modification time the watcher cannot miss (a later second)."""
    before = path.stat().st_mtime_ns
    path.write_text(text)
    os.utime(path, ns=(before + 1_000_000_000, before + 1_000_000_000))


def call(app: App, text: str = "hi") -> str:
    answer = app.plugin_code.call("echo-kit", "python", "tool", "echo", "execute", {"arguments": {"text": text}}, {},
                                  timeout=WAIT, cancel=None)
    return str(answer["value"])


def answers(app: App, expected: str) -> bool:
    """Whether the dev plugin answers `expected` (False while it is missing or being reloaded)."""
    try:
        return call(app) == expected
    except (CallFailed, PluginError, UserFacingError):
        return False


def cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`llmspace ARGS` on `home` as a process of its own (for a dev session of this process to serve)."""
    env = {**os.environ, "LLM_SPACE_HOME": str(home), "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "llmspace", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=180)


def cli_here(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`llmspace ARGS` on `home` in this process, where the dev session is another process's."""
    return cli_in_process(list(args), env={"LLM_SPACE_HOME": str(home), "PYTHONPATH": str(ROOT)}, cwd=ROOT)


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
        wait_until(session.poll, "the reload")
        assert call(app) == "v2: hi"
        took = time.monotonic() - t0
        assert took < 5.0, f"the reload and the next call took {took:.2f} s"  # ~0.5 s here; 1 s is the goal
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
        wait_until(lambda: session.poll() or any("not reloaded" in line for line in lines), "the failed trial")
        shown = "\n".join(lines)
        assert f"{folder / 'tools' / 'echo.py'}:7: SyntaxError" in shown, shown
        assert "the previous version keeps running" in shown
        assert call(app) == "v1: hi"
        save(folder / "tools" / "echo.py", tool("v3"))
        wait_until(session.poll, "the reload of v3")
        assert call(app) == "v3: hi"
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
        wait_until(follower.step, "the follower's reload")
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
        other = cli_here(home, "plugins", "call-tool", "echo-kit", "echo", '{"text": "there"}')
        assert "v1: there" in other.stdout, other.stdout + other.stderr
        proc.send_signal(signal.SIGINT)
        assert proc.wait(WAIT) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
    assert not dev_file(DataRoot(home)).exists()
    assert "No plugins installed" in cli_here(home, "plugins", "list").stdout


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
    assert "v1: there" in cli_here(home, "plugins", "call-tool", "echo-kit", "echo", '{"text": "there"}').stdout


# -- issue 35 item 8: an entry counts only while a `plugins dev` process serves it ----------------
def test_an_entry_counts_only_while_a_dev_process_serves_it_not_pid_1_nor_any_live_process(home: Path,
                                                                                           tmp_path: Path) -> None:
    folder = dev_folder(tmp_path)
    forged = tmp_path / "forged"
    forged.mkdir()
    (forged / "package.json").write_text(json.dumps({"name": "forged", "version": "0.1.0"}))
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    app = App(DataRoot(home))
    session = DevSession(app, folder, out=lambda _line: None)
    try:
        session.start()
        served = read_entries(app.root)
        assert [(e.name, e.pid) for e in served] == [("echo-kit", os.getpid())]
        # what a plugin allowed to write there could add: pid 1 never ends, the others are live
        # processes that serve nothing (one of them this very dev process, for another folder)
        data = json.loads(dev_file(app.root).read_text())
        data["plugins"] += [{"name": "forged", "folder": str(forged), "pid": pid}
                            for pid in (1, sleeper.pid, os.getpid())]
        data["plugins"].append({"name": "echo-kit", "folder": str(forged), "pid": os.getpid()})
        dev_file(app.root).write_text(json.dumps(data))
        assert read_entries(app.root) == served
        other = cli(home, "plugins", "list")
        assert "forged" not in other.stdout and "echo-kit" in other.stdout, other.stdout + other.stderr
    finally:
        session.stop()
        sleeper.kill()
        sleeper.wait(WAIT)
        app.close()
    assert read_entries(DataRoot(home)) == []


# -- issue 35 items 9 and 17: run/ and its files are owner-only ---------------------------------------
def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_run_is_owner_only_and_its_dev_files_too_even_where_an_older_run_folder_was_0755(home: Path,
                                                                                         tmp_path: Path) -> None:
    run = home / "run"
    run.mkdir(mode=0o755)
    run.chmod(0o755)
    (run / "local-engine.json").write_text("{}")
    (run / "local-engine.json").chmod(0o644)
    app = App(DataRoot(home))
    session = DevSession(app, dev_folder(tmp_path), out=lambda _line: None)
    try:
        session.start()
        files = {p.name: mode(p) for p in run.iterdir()}
        assert mode(run) == 0o700 and files and set(files.values()) == {0o600}, (oct(mode(run)), files)
    finally:
        session.stop()
        app.close()


# -- issue 35 item 17: folders that are large or deep ----------------------------------------------------
def nest(base: Path, depth: int) -> None:
    """`depth` folders one in the other below `base` (made one level at a time: no long paths)."""
    fd = os.open(base, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for _ in range(depth):
            os.mkdir("d", dir_fd=fd)
            inner = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = inner
    finally:
        os.close(fd)


def remove_deep(path: Path) -> None:
    subprocess.run(["rm", "-rf", str(path)], check=True, timeout=120)


def test_a_folder_1500_deep_is_refused_with_a_clear_error_and_nothing_is_registered(home: Path,
                                                                                     tmp_path: Path) -> None:
    folder = dev_folder(tmp_path)
    (folder / "assets").mkdir()
    nest(folder / "assets", 1500)
    app = App(DataRoot(home))
    try:
        with pytest.raises(PluginError) as caught:
            DevSession(app, folder, out=lambda _line: None).start()
        assert "levels deep" in caught.value.message and str(folder.resolve()) in caught.value.message
        assert not dev_file(app.root).exists() and not (home / "run").exists()
    finally:
        app.close()
        remove_deep(folder / "assets")


def test_the_apps_follower_logs_a_folder_too_deep_and_keeps_following(home: Path, tmp_path: Path,
                                                                       caplog: pytest.LogCaptureFixture) -> None:
    folder = dev_folder(tmp_path)
    dev_app, app = App(DataRoot(home)), App(DataRoot(home))
    session = DevSession(dev_app, folder, out=lambda _line: None)
    follower = DevFollower(app, poll=0.05)
    try:
        session.start()
        (folder / "assets").mkdir()
        nest(folder / "assets", 1500)  # made deep after `plugins dev` started watching it
        with caplog.at_level(logging.WARNING, "llmspace.plugins"):
            follower.start()
            wait_until(lambda: "levels deep" in caplog.text, "the warning about the deep folder")
            wait_until(lambda: answers(app, "v1: hi"), "the app to load the dev plugin")
        session.stop()
        wait_until(lambda: [r.key for r in app.plugins.records()] == [], "the app to drop the ended dev plugin")
    finally:
        session.stop()
        follower.close()
        dev_app.close()
        app.close()
        remove_deep(folder / "assets")


@pytest.fixture(scope="module")
def big_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A plugin folder with 20,000 more files (in 200 folders)."""
    folder = dev_folder(tmp_path_factory.mktemp("big"))
    for d in range(200):
        sub = folder / "data" / f"d{d:03}"
        sub.mkdir(parents=True)
        for f in range(100):
            (sub / f"f{f:03}.txt").write_bytes(b"x")
    return folder


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)  # every thread of this process
    return usage.ru_utime + usage.ru_stime


WATCHED = 3.0  # s of wall time
CPU_BOUND = 0.3  # s of CPU in that time: ~0.9 when every file was looked at every 0.2 s, ~0.03 with events


def busy_while(step: Callable[[], None] | None, seconds: float = WATCHED) -> float:
    """CPU seconds this process spends while `step` runs every POLL s (None: just waits)."""
    before = cpu_seconds()
    deadline = time.monotonic() + seconds
    tick = threading.Event()
    while not tick.wait(0.2) and time.monotonic() < deadline:
        if step is not None:
            step()
    return cpu_seconds() - before


@pytest.fixture
def served_big(home: Path, big_folder: Path) -> Iterator[tuple[App, DevSession]]:
    app = App(DataRoot(home))
    session = DevSession(app, big_folder, out=lambda _line: None)
    session.start()
    try:
        yield app, session
    finally:
        session.stop()
        app.close()


def test_serving_a_folder_of_20000_files_costs_little_cpu_while_nothing_changes(
        served_big: tuple[App, DevSession], big_folder: Path) -> None:
    _app, session = served_big
    spent = busy_while(session.poll)  # what `plugins dev` does between changes
    assert spent < CPU_BOUND, f"{spent:.2f} CPU s in {WATCHED:.0f} s watching 20,000 files"
    save(big_folder / "tools" / "echo.py", tool("v2"))
    wait_until(session.poll, "the reload")


def test_the_apps_follower_of_a_folder_of_20000_files_costs_little_cpu_while_nothing_changes(
        served_big: tuple[App, DevSession], home: Path, big_folder: Path) -> None:
    app = App(DataRoot(home))
    follower = DevFollower(app)
    try:
        follower.step()  # reads the list and starts following the folder
        spent = busy_while(follower.step)  # what its thread does every POLL s
        assert spent < CPU_BOUND, f"{spent:.2f} CPU s in {WATCHED:.0f} s following 20,000 files"
        save(big_folder / "tools" / "echo.py", tool("v3"))
        wait_until(follower.step, "the follower's reload")
        assert call(app) == "v3: hi"
    finally:
        follower.close()
        app.close()
