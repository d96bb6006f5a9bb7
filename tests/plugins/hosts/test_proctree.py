"""What plugin code starts ends with its host: a child that keeps the host's stderr open
does not hold up the stop or the CLI, children (also after `setsid`, and those that left the
host's tree and erased its token) are gone right after the host's stop and count towards its
memory, and the host itself dies with the app even after a kill -9 of the app."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from llmspace.app import App
from llmspace.plugins.hosts import proctree
from llmspace.plugins.hosts.js_runtime import find_runtime

from ..builders import make_plugin
from ..code_plugins import call_plugin_tool as _call
from ..code_plugins import code_plugin
from ..conformance.conftest import BUN_CACHED, absent

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="process-tree control is Linux only")

# "Within 1 s" in issue 20. Measured on this 2-core machine shared with other work: the CLI
# exits 0.05 s after the tool's answer and the children are gone when the stop returns;
# the bounds below keep a wide margin for load (before the fix: 10 s, children alive).
EXIT_BOUND = 3.0
GONE_BOUND = 1.5

PY_SPAWNER = '''
import json, os, subprocess, time
class Spawner:
    name = "spawner"
    description = "Starts children that outlive it unless the app ends them."
    parameters = {"type": "object"}
    def execute(self, context, args):
        plain = subprocess.Popen(["sleep", "300"])  # inherits the host's stderr
        detached = subprocess.Popen(["sleep", "301"], start_new_session=True,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        answer = {"host": os.getpid(), "children": [plain.pid, detached.pid]}
        home = os.environ["LLM_SPACE_HOME"]
        with open(os.path.join(home, "pids.json"), "w") as f:
            json.dump(answer, f)
        if args.get("hang"):
            time.sleep(120)
        with open(os.path.join(home, "answered.txt"), "w") as f:
            f.write(repr(time.time()))
        return answer
'''

JS_SPAWNER = '''
import { spawn } from "node:child_process";
import fs from "node:fs";
export default class Spawner {
  name = "js_spawner";
  description = "Starts children that outlive it unless the app ends them.";
  parameters = {type: "object"};
  async execute(context, args) {
    const plain = spawn("sleep", ["300"], {stdio: "ignore"});
    const inherits = spawn("sleep", ["302"], {stdio: ["ignore", "ignore", "inherit"]});
    const detached = spawn("sleep", ["301"], {stdio: "ignore", detached: true});
    const answer = {host: process.pid, children: [plain.pid, inherits.pid, detached.pid]};
    fs.writeFileSync(process.env.LLM_SPACE_HOME + "/pids.json", JSON.stringify(answer));
    if (args.spin) {  // a busy event loop: the host never sees the end of its input
      const end = Date.now() + 120000;
      while (Date.now() < end) { /* spin */ }
    }
    return answer;
  }
}
'''


def _alive(pid: int) -> bool:
    """Whether `ps` still lists `pid` as a process that is not a zombie."""
    out = subprocess.run(["ps", "-o", "stat=", "-p", str(pid)], capture_output=True, text=True).stdout.strip()
    return bool(out) and not out.startswith("Z")


def _gone_within(pids: list[int], seconds: float) -> list[int]:
    """The pids of `pids` still alive after `seconds` (waiting on a condition, not a sleep)."""
    deadline = time.monotonic() + seconds
    pause = threading.Event()
    while True:
        alive = [p for p in pids if _alive(p)]
        if not alive or time.monotonic() >= deadline:
            return alive
        pause.wait(0.05)


@pytest.fixture
def leftovers() -> Iterator[list[int]]:
    """Pids the test started indirectly: killed at the end whatever the outcome."""
    pids: list[int] = []
    yield pids
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def _bun_app(app: App) -> App:
    bun = shutil.which("bun") or (str(BUN_CACHED) if BUN_CACHED.exists() else None)
    if bun is None:
        absent("Bun is not installed (.ci/run installs it into .cache/js/bun)")
    runtime = find_runtime(None, {"PATH": str(Path(str(bun)).parent)})
    app.plugin_code.js_runtime = lambda: runtime
    return app


def _children_end_with_the_stop(app: App, tool: str, leftovers: list[int]) -> None:
    """Call the spawner `tool`, stop the hosts: its children and its host are gone within
    GONE_BOUND and the stop took less than EXIT_BOUND."""
    answer = json.loads(_call(app, tool, {}).text())
    leftovers += answer["children"]
    assert all(_alive(p) for p in answer["children"])
    started = time.monotonic()
    assert app.plugin_code.close() == []
    stopped = time.monotonic() - started
    assert _gone_within(answer["children"] + [answer["host"]], GONE_BOUND) == []
    assert stopped < EXIT_BOUND, f"the stop took {stopped:.1f} s"


def test_children_of_a_python_tool_are_gone_within_a_second_of_the_host_stop(
        app: App, home: Path, leftovers: list[int]) -> None:
    code_plugin(home, tools={"spawner": PY_SPAWNER})
    app.plugins.refresh()
    _children_end_with_the_stop(app, "spawner", leftovers)


def test_children_of_a_js_tool_are_gone_within_a_second_of_the_host_stop(
        app: App, home: Path, leftovers: list[int]) -> None:
    _bun_app(app)
    make_plugin(home, "js-kit", engines=">=4.9.0", files={"tools/spawner.mjs": JS_SPAWNER})
    app.plugins.refresh()
    _children_end_with_the_stop(app, "js_spawner", leftovers)


def _written(path: Path) -> bool:
    """Whether `path` holds a whole JSON value yet."""
    try:
        json.loads(path.read_text())
    except (OSError, ValueError):
        return False
    return True


def _cli(home: Path, *args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "LLM_SPACE_HOME": str(home), "LLM_SPACE_NO_OS_TRASH": "1"}
    return subprocess.Popen([sys.executable, "-m", "llmspace", "plugins", "call-tool", *args], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_the_cli_exits_right_after_the_answer_and_leaves_no_child_behind(home: Path, leftovers: list[int]) -> None:
    code_plugin(home, tools={"spawner": PY_SPAWNER})
    proc = _cli(home, "kit", "spawner", "{}")
    try:
        _out, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
    ended = time.time()
    answer = json.loads((home / "pids.json").read_text())
    leftovers += answer["children"]
    assert proc.returncode == 0, err
    took = ended - float((home / "answered.txt").read_text())
    assert took < EXIT_BOUND, f"the CLI exited {took:.1f} s after the tool's answer"
    assert _gone_within(answer["children"] + [answer["host"]], GONE_BOUND) == []


@pytest.mark.parametrize("runtime", ["python", "bun"])
def test_after_a_kill_9_of_the_app_its_plugin_host_dies_too(home: Path, leftovers: list[int], runtime: str) -> None:
    """The Python host also ends at the end of its input; a JS host spinning its event loop
    never reads it and dies only by PR_SET_PDEATHSIG (set by plugin_host/guard.py)."""
    if runtime == "python":
        code_plugin(home, tools={"spawner": PY_SPAWNER})
        proc = _cli(home, "kit", "spawner", '{"hang": true}')
    else:
        bun = shutil.which("bun") or (str(BUN_CACHED) if BUN_CACHED.exists() else None)
        if bun is None:
            absent("Bun is not installed (.ci/run installs it into .cache/js/bun)")
        (home / "settings").mkdir(exist_ok=True)
        (home / "settings" / "js-runtime.json").write_text(json.dumps({"path": bun}))
        make_plugin(home, "js-kit", engines=">=4.9.0", files={"tools/spawner.mjs": JS_SPAWNER})
        proc = _cli(home, "js-kit", "js_spawner", '{"spin": true}')
    pids = home / "pids.json"
    try:
        deadline = time.monotonic() + 120
        pause = threading.Event()
        while not _written(pids) and proc.poll() is None and time.monotonic() < deadline:
            pause.wait(0.05)  # the plugin writes the file in place: it may exist before it holds the JSON
        assert _written(pids), proc.communicate(timeout=5)
        answer = json.loads(pids.read_text())
        leftovers += answer["children"] + [answer["host"]]
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
    finally:
        proc.kill()
        proc.communicate(timeout=30)
    assert _gone_within([answer["host"]], 5.0) == []


# Children that leave the host's tree and its marks: each escapee is the child of a process
# that called setsid and then exited, and runs with an environment without
# LLM_SPACE_HOST_TOKEN, holding `mb` MB resident (issue 35: six such children held 2.8 GB
# above hostMemoryMB and outlived the app).
PY_ESCAPER = '''
import json, os, sys

HOLD = "import sys, time\\nkeep = b'x' * (int(sys.argv[1]) << 20)\\nprint('ready', flush=True)\\ntime.sleep(600)\\n"

class Escaper:
    name = "escaper"
    description = "Starts children that leave its tree and erase its token."
    parameters = {"type": "object"}
    def execute(self, context, args):
        env = {k: v for k, v in os.environ.items() if k != "LLM_SPACE_HOST_TOKEN"}
        pids = []
        for _ in range(int(args.get("count", 3))):
            read, write = os.pipe()
            middle = os.fork()
            if middle == 0:
                os.setsid()
                escapee = os.fork()
                if escapee == 0:
                    os.dup2(write, 1)
                    os.execve(sys.executable, [sys.executable, "-c", HOLD, str(args.get("mb", 8))], env)
                os.write(write, f"{escapee}\\n".encode())
                os._exit(0)
            os.close(write)
            os.waitpid(middle, 0)
            with os.fdopen(read) as lines:
                pids.append(int(lines.readline()))
                with open(os.path.join(os.environ["LLM_SPACE_HOME"], "escapees.json"), "w") as f:
                    json.dump({"host": os.getpid(), "escapees": pids}, f)
                assert lines.readline().strip() == "ready"
        return {"host": os.getpid(), "escapees": pids}
'''


def _cgroups_here() -> bool:
    base = proctree.own_cgroup()
    if base is None:
        return False
    probe = base / f"{proctree.CGROUP_PREFIX}probe-{os.getpid()}"
    try:
        probe.mkdir()
        probe.rmdir()
    except OSError:
        return False
    return True


@pytest.fixture(params=["cgroup", "tree"])
def tracking(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """How the app finds a host's processes: its own cgroup (where the app may make one), or
    the host's tree (the host is its descendants' reaper)."""
    if request.param == "cgroup" and not _cgroups_here():
        pytest.skip("the app may not make a cgroup v2 here")
    if request.param == "tree":
        monkeypatch.setattr(proctree, "USE_CGROUPS", False)
    return str(request.param)


def _in_host_cgroup(pid: int) -> bool:
    try:
        return proctree.CGROUP_PREFIX in Path(f"/proc/{pid}/cgroup").read_text()
    except OSError:
        return False


def test_children_that_setsid_and_erase_the_host_token_are_gone_after_the_host_stop(
        app: App, home: Path, leftovers: list[int], tracking: str) -> None:
    code_plugin(home, tools={"escaper": PY_ESCAPER})
    app.plugins.refresh()
    answer = json.loads(_call(app, "escaper", {"count": 3}).text())
    leftovers += answer["escapees"]
    assert all(_alive(p) for p in answer["escapees"])
    if tracking == "cgroup":
        assert all(_in_host_cgroup(p) for p in answer["escapees"])
    assert app.plugin_code.close() == []
    assert _gone_within(answer["escapees"] + [answer["host"]], GONE_BOUND) == []


def test_the_memory_of_children_that_left_the_host_tree_counts_and_stops_the_host(
        app: App, home: Path, leftovers: list[int], tracking: str) -> None:
    (home / "settings").mkdir(exist_ok=True)
    (home / "settings" / "plugin-hosts.json").write_text(json.dumps({"hostMemoryMB": 128}))
    code_plugin(home, tools={"escaper": PY_ESCAPER})
    app.plugins.refresh()
    out = _call(app, "escaper", {"count": 3, "mb": 60})
    answer = json.loads((home / "escapees.json").read_text())
    leftovers += answer["escapees"]
    # The watch looks every second: once the host and its escapees hold more than 128 MB (the
    # second escapee's 60 MB may be enough), all of them are ended, the call too if it runs.
    assert len(answer["escapees"]) >= 2
    if len(answer["escapees"]) < 3 or out.isError:
        assert "plugin host exceeded 128 MB" in out.text(), out.text()
    assert _gone_within(answer["escapees"] + [answer["host"]], 30.0) == []


def test_empty_host_cgroups_an_app_killed_with_kill_9_left_are_removed_by_the_next_one(
        app: App, home: Path, leftovers: list[int], monkeypatch: pytest.MonkeyPatch) -> None:
    if not _cgroups_here():
        pytest.skip("the app may not make a cgroup v2 here")
    base = proctree.own_cgroup()
    assert base is not None
    stale = base / f"{proctree.CGROUP_PREFIX}left-by-a-killed-app-{os.getpid()}"
    stale.mkdir()
    monkeypatch.setattr(proctree, "_swept", set())  # this process is the next app
    code_plugin(home, tools={"spawner": PY_SPAWNER})
    app.plugins.refresh()
    try:
        leftovers += json.loads(_call(app, "spawner", {}).text())["children"]
        assert not stale.exists()
    finally:
        if stale.exists():
            stale.rmdir()
