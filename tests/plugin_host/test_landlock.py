"""llmspace/plugin_host/landlock.py: the ABI is read from the kernel and a confined process
(a real child: confinement cannot be undone) reads, writes, connects and runs programs only
as its rules say."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from llmspace.plugin_host.landlock import abi_version

ROOT = Path(__file__).resolve().parents[2]

CHILD = r'''
import json, os, socket, subprocess, sys
from llmspace.plugin_host.landlock import Rules, confine
args = json.loads(sys.argv[1])
rules = Rules(args["read"], args["write"], connect_tcp=args["connect"],
              allow_execute_everywhere=args["exec"])
confine(rules)
out = {"skipped": rules.skipped}
def attempt(key, fn):
    try:
        fn()
        out[key] = "ok"
    except OSError as exc:
        out[key] = f"{type(exc).__name__}:{exc.errno}"
attempt("read_allowed", lambda: open(args["readable"]).read())
attempt("read_denied", lambda: open(args["secret"]).read())
attempt("write_allowed", lambda: open(os.path.join(args["write"][0], "new.txt"), "w").write("x"))
attempt("write_denied", lambda: open(args["secret"] + ".new", "w").write("x"))
attempt("connect", lambda: socket.create_connection(("127.0.0.1", args["port"]), timeout=5).close())
attempt("exec", lambda: subprocess.run(["/bin/true"], check=True))
attempt("signal_parent", lambda: os.kill(os.getppid(), 0))
print(json.dumps(out))
'''

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux") or abi_version() < 4,
                                reason="needs Landlock ABI 4 (Linux 6.7)")


def _run(tmp_path: Path, *, connect: bool, exec_: bool) -> dict[str, object]:
    (tmp_path / "ok").mkdir(exist_ok=True)
    (tmp_path / "ok" / "file.txt").write_text("fine", encoding="utf-8")
    (tmp_path / "rw").mkdir(exist_ok=True)
    (tmp_path / "secret.txt").write_text("key", encoding="utf-8")
    server = socket.create_server(("127.0.0.1", 0))
    try:
        base = [sys.prefix, sys.base_prefix, str(ROOT / "llmspace"), "/usr", "/lib", "/lib64", "/proc/self"]
        args = {"read": [*base, str(tmp_path / "ok"), str(tmp_path / "missing")], "write": [str(tmp_path / "rw")],
                "connect": connect, "exec": exec_, "readable": str(tmp_path / "ok" / "file.txt"),
                "secret": str(tmp_path / "secret.txt"), "port": server.getsockname()[1]}
        done = subprocess.run([sys.executable, "-c", CHILD, json.dumps(args)], capture_output=True, text=True,
                              timeout=60, cwd=ROOT, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    finally:
        server.close()
    assert done.returncode == 0, done.stderr
    result: dict[str, object] = json.loads(done.stdout)
    return result


def test_the_kernel_reports_its_abi() -> None:
    assert abi_version() >= 1


def test_a_confined_process_reaches_only_what_its_rules_list(tmp_path: Path) -> None:
    out = _run(tmp_path, connect=False, exec_=False)
    assert out["read_allowed"] == "ok" and out["write_allowed"] == "ok"
    assert out["read_denied"] == "PermissionError:13" and out["write_denied"] == "PermissionError:13"
    assert out["connect"] == "PermissionError:13" and out["exec"] == "PermissionError:13"
    assert out["signal_parent"] == ("PermissionError:1" if abi_version() >= 6 else "ok")  # the app stays out of reach
    assert str(tmp_path / "missing") in out["skipped"]  # type: ignore[operator]


def test_tcp_connect_and_programs_are_allowed_when_the_rules_say_so(tmp_path: Path) -> None:
    out = _run(tmp_path, connect=True, exec_=True)
    assert out["connect"] == "ok" and out["exec"] == "ok"
    assert out["read_denied"] == "PermissionError:13"
