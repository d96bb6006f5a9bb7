"""Capabilities enforced in the single-file executable (issue 28): the hostile plugin of
tests/plugins/hosts/test_sandbox_enforced.py, in Python and in TypeScript (Bun and Node 22),
packed and installed with the frozen CLI (`plugins pack`, `plugins install --yes`) and
called with `plugins call-tool`. Declaring `[]`, each attempt (a fake `~/.ssh/id_rsa` in a
temporary HOME, a file outside its folders, a TCP connection to a loopback server, a UDP
datagram to another, another program, an API key in the environment) fails inside the plugin while its other calls keep
working; the same plugin declaring the capabilities succeeds; `plugins info` says every
capability is enforced, for JavaScript too (the executable's `--plugin-guard` confines the
runtime before it starts). Skipped without LLMSPACE_BUILD_DIST=1 (tests/packaging/conftest.py).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from llmspace.plugins.hosts.sandbox import landlock_abi
from tests.packaging.test_dist import JS_TOOL, run
from tests.plugins.builders import make_plugin
from tests.plugins.hosts.test_sandbox_enforced import (
    ALL,
    BUN_DIR,
    NODE22,
    PLAN_SWAPPER,
    PY_TOOL,
    TS_TOOL,
    _Listener,
    _UdpEcho,
)
from tests.ui.test_e2e import wait_for

pytestmark = [pytest.mark.dist, pytest.mark.skipif(landlock_abi() < 4, reason="needs Landlock ABI 4 (Linux 6.7)")]

LANGS = ["py", "ts-bun", "ts-node"]
SECRET = "sk-test-secret-123"


@pytest.fixture()
def world(home: Path, tmp_path: Path) -> Iterator[dict[str, Any]]:
    """A fake HOME with a private key, an API key in the environment, Bun on PATH, a loopback
    TCP server and a folder outside the plugin's."""
    fake_home = tmp_path / "user"
    (fake_home / ".ssh").mkdir(parents=True)
    (fake_home / ".ssh" / "id_rsa").write_text("FAKE-PRIVATE-KEY\n", encoding="utf-8")
    env = dict(os.environ, HOME=str(fake_home), OPENAI_API_KEY=SECRET, LLM_SPACE_HOME=str(home),
               PATH=f"{BUN_DIR}{os.pathsep}{os.environ.get('PATH', '')}")
    env.pop("LLM_SPACE_SANDBOX", None)
    listener, udp = _Listener(), _UdpEcho()
    (tmp_path / "elsewhere").mkdir()
    yield {"home": home, "env": env, "src": tmp_path / "src", "outside": tmp_path / "elsewhere" / "outside.txt",
           "port": listener.port, "udp": udp.port}
    listener.close()
    udp.close()


def _install(exe: Path, world: dict[str, Any], lang: str, capabilities: list[str]) -> None:
    """Pack the hostile plugin declaring `capabilities` and install it with --yes (granted)."""
    if lang == "ts-bun" and not (BUN_DIR / "bun").is_file():
        pytest.skip("no bun")
    if lang == "ts-node" and not NODE22.is_file():
        pytest.skip("no Node 22")
    files: dict[str, Any] = {"tools/probe.py": PY_TOOL} if lang == "py" else {"tools/probe.ts": TS_TOOL}
    folder = make_plugin(world["src"], "hostile", engines=">=4.9.0", files=files,
                         llmSpace={"capabilities": capabilities})
    if lang != "py":
        runtime = run(exe, "plugins", "runtime", str(NODE22 if lang == "ts-node" else BUN_DIR / "bun"),
                      env=world["env"])
        assert runtime.returncode == 0, runtime.stdout + runtime.stderr
    archive = world["src"] / "hostile.zip"
    packed = run(exe, "plugins", "pack", str(folder), "-o", str(archive), env=world["env"])
    assert packed.returncode == 0, packed.stdout + packed.stderr
    installed = run(exe, "plugins", "install", "--yes", str(archive), env=world["env"])
    assert installed.returncode == 0, installed.stdout + installed.stderr
    assert "Installed plugin hostile 1.0.0. Status: active" in installed.stdout, installed.stdout


def _call(exe: Path, world: dict[str, Any], step: str, arg: str = "") -> str:
    proc = run(exe, "plugins", "call-tool", "hostile", "probe", json.dumps({"step": step, "arg": arg}),
               env=world["env"])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


@pytest.mark.parametrize("lang", LANGS)
def test_in_the_executable_a_plugin_declaring_nothing_is_refused_each_attempt_and_its_other_calls_keep_working(
        exe: Path, world: dict[str, Any], lang: str) -> None:
    _install(exe, world, lang, [])
    read = _call(exe, world, "read")
    assert "refused" in read and "FAKE-PRIVATE-KEY" not in read, read
    write = _call(exe, world, "write", str(world["outside"]))
    assert "refused" in write and not world["outside"].exists(), write
    connect = _call(exe, world, "connect", str(world["port"]))
    assert "refused" in connect, connect
    udp = _call(exe, world, "udp", str(world["udp"]))
    assert "refused" in udp and "pong" not in udp, udp
    spawn = _call(exe, world, "spawn")
    assert "refused" in spawn, spawn
    assert SECRET not in _call(exe, world, "env")
    assert "fine" in _call(exe, world, "ok")


@pytest.mark.parametrize("lang", LANGS)
def test_in_the_executable_a_confined_host_is_the_apps_own_child_so_it_dies_with_the_app(
        exe: Path, world: dict[str, Any], lang: str) -> None:
    """Its parent is the app, not a second bootloader that unpacked the whole bundle again:
    PR_SET_PDEATHSIG (set before the runtime's exec for JavaScript) then fires when the app dies."""
    _install(exe, world, lang, [])
    parent, app = _call(exe, world, "parent").split()
    assert parent.split(":")[1] == app.split(":")[1], (parent, app)


def _parent_and_state(pid: int) -> tuple[int, str] | None:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace").rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return int(fields[1]), fields[0]


def _gone(pid: int) -> bool:
    info = _parent_and_state(pid)
    return info is None or info[1] in ("Z", "X")


def test_a_kill_9_of_the_executable_ends_a_javascript_host_whose_plugin_holds_its_event_loop(
        exe: Path, world: dict[str, Any]) -> None:
    """Only PR_SET_PDEATHSIG can end it: the app's tree kill dies with the app, and a runtime
    whose event loop is held never reads the end of its input."""
    _install(exe, world, "ts-bun", [])
    marker = world["home"] / "data" / "plugins" / "hostile" / "blocking.pid"
    call = subprocess.Popen([str(exe), "plugins", "call-tool", "hostile", "probe",
                             json.dumps({"step": "block", "arg": str(marker)})],
                            env=world["env"], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        wait_for(lambda: marker.is_file() and marker.read_text(encoding="utf-8"), timeout=120)
        host = int(marker.read_text(encoding="utf-8"))
        parent = _parent_and_state(host)
        assert parent is not None
        os.kill(parent[0], signal.SIGKILL)  # the app (the process that started the host)
        wait_for(lambda: _gone(host), timeout=30)
    finally:
        call.kill()
        call.communicate(timeout=60)
        left = int(marker.read_text(encoding="utf-8") or 0) if marker.is_file() else 0
        if left and not _gone(left):
            os.kill(left, signal.SIGKILL)  # not ended with the app: do not leave it behind


@pytest.mark.parametrize("lang", LANGS)
def test_in_the_executable_the_same_plugin_declaring_the_capabilities_succeeds(
        exe: Path, world: dict[str, Any], lang: str) -> None:
    _install(exe, world, lang, ALL)
    assert "read:FAKE-PRIVATE-KEY" in _call(exe, world, "read")
    assert "wrote" in _call(exe, world, "write", str(world["outside"]))
    assert world["outside"].read_text(encoding="utf-8") == "pwned"
    assert "connected" in _call(exe, world, "connect", str(world["port"]))
    assert "udp:pong" in _call(exe, world, "udp", str(world["udp"]))
    assert "ran:hi" in _call(exe, world, "spawn")
    assert f"env:{SECRET}" in _call(exe, world, "env")


def test_plugins_info_in_the_executable_says_each_capability_is_enforced_for_javascript_too(
        exe: Path, world: dict[str, Any]) -> None:
    _install(exe, world, "ts-bun", [])
    info = run(exe, "plugins", "info", "hostile", env=world["env"])
    assert info.returncode == 0, info.stderr
    assert "not enforced" not in info.stdout, info.stdout
    network = next(line for line in info.stdout.splitlines() if line.strip().startswith("network:"))
    assert "refused, enforced (Landlock ABI" in network and "a seccomp filter for UDP" in network, network
    assert "JavaScript/TypeScript files: enforced" in info.stdout, info.stdout


def test_a_javascript_host_started_through_the_executables_launcher_keeps_the_users_library_path(
        exe: Path, world: dict[str, Any]) -> None:
    make_plugin(world["home"], "where", files={"tools/where.mjs": JS_TOOL})  # a legacy plugin: the whole environment
    assert run(exe, "plugins", "runtime", str(BUN_DIR / "bun"), env=world["env"]).returncode == 0
    proc = run(exe, "plugins", "call-tool", "where", "where", "{}", env={**world["env"], "LD_LIBRARY_PATH": "/opt/mine/lib"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert json.loads(proc.stdout) == {"runtime": "bun", "ld": "/opt/mine/lib"}


@pytest.mark.parametrize("lang", LANGS)
def test_in_the_executable_a_plan_too_long_for_the_environment_reaches_each_host_whole(
        exe: Path, world: dict[str, Any], lang: str, tmp_path: Path) -> None:
    """A data root among thousands of neighbours: the `read-outside-workspace` plan is over the
    environment's share and goes in a sealed memory file the host (the executable again, or
    its `--plugin-guard` launcher) inherits and checks; the host starts confined by it."""
    for k in range(3000):
        (tmp_path / f"neighbour-{k:04d}-with-a-long-enough-name-to-fill-the-plan").mkdir()
    _install(exe, world, lang, ["read-outside-workspace"])
    (world["home"] / "settings" / "keys.json").write_text('{"key": "sk-settings"}', encoding="utf-8")
    tmp = world["home"] / "cache" / "plugin-tmp" / "hostile"
    tmp.mkdir(parents=True, exist_ok=True)
    racer = subprocess.Popen([sys.executable, "-c", PLAN_SWAPPER, str(tmp), "600"], stdout=subprocess.PIPE, text=True)
    try:  # a leftover child of the plugin swaps every plan it finds where the plugin may write
        assert "read:FAKE-PRIVATE-KEY" in _call(exe, world, "read")
        settings = _call(exe, world, "settings")
        assert "refused" in settings and "sk-settings" not in settings, settings
    finally:
        racer.kill()
        swapped, _ = racer.communicate(timeout=60)
    assert "swapped" not in swapped
