"""Acceptance: 200 writers killed with SIGKILL in the middle of saving a multi-MB thread.

A helper process (started once, with llmspace imported) forks one writer per round; the
writer saves the thread through `jsonio.write_bytes_atomic` in a loop, alternating two
versions, and is killed with SIGKILL at a random moment. Afterwards the next workspace
scan leaves no temp file behind, and the thread holds one of the two versions, valid.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from llmspace.core.threadio import parse_thread, serialize_thread, thread_from_data
from llmspace.core.workspace import Workspace
from llmspace.temp_files import is_temp_name

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork and SIGKILL")

KILLS = 200

# Runs in the helper process. The random delay is the moment of the kill, not a wait for a condition.
KILLER = r"""
import os, random, signal, sys, time
from llmspace.jsonio import write_bytes_atomic
from llmspace.temp_files import is_temp_name

target, first, second, kills = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
payloads = [open(first, "rb").read(), open(second, "rb").read()]
folder = os.path.dirname(target)
rng = random.Random(20240611)
mid_save = most_temps = 0
for round_no in range(kills):
    ready_r, ready_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(ready_r)
        os.write(ready_w, b"go")
        n = round_no
        while True:
            write_bytes_atomic(target, payloads[n % 2])
            n += 1
    os.close(ready_w)
    os.read(ready_r, 2)
    os.close(ready_r)
    time.sleep(rng.uniform(0.0, 0.05))
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    temps = sum(1 for n in os.listdir(folder) if is_temp_name(n))
    mid_save += temps > 0
    most_temps = max(most_temps, temps)
print(mid_save, most_temps)
"""


def _big_thread(tag: str) -> bytes:
    text = (f"{tag} " + "lorem ipsum dolor sit amet " * 40 + "\n") * 3
    messages = [{"id": f"m{i}", "role": "user" if i % 2 == 0 else "assistant", "content": [{"type": "text", "text": text}]}
                for i in range(900)]
    return serialize_thread(thread_from_data({"title": "big", "context": {"messages": messages}}))


def test_200_kills_mid_save_leave_no_temp_file_after_the_next_scan_and_a_valid_thread(tmp_path: Path):
    root = tmp_path / "workspace"
    (root / "runs").mkdir(parents=True)
    target = root / "runs" / "big.json"
    versions = [_big_thread("first"), _big_thread("second")]
    assert all(len(v) > 3_000_000 for v in versions)
    paths = []
    for i, data in enumerate(versions):
        p = tmp_path / f"v{i}.bin"
        p.write_bytes(data)
        paths.append(str(p))
    target.write_bytes(versions[0])

    done = subprocess.run([sys.executable, "-c", KILLER, str(target), *paths, str(KILLS)],
                          capture_output=True, text=True, timeout=240, cwd=Path(__file__).resolve().parents[2])
    assert done.returncode == 0, done.stderr
    mid_save, most_temps = map(int, done.stdout.split())
    print("kills mid-save:", mid_save, "most temp files at once:", most_temps)
    assert mid_save >= KILLS // 10, f"only {mid_save} of {KILLS} kills hit a save in progress"
    assert most_temps <= 2  # each writer's first save already swept its predecessors' leftovers

    ws = Workspace(root, use_os_trash=False)
    tree = ws.list_tree()
    assert [(e.rel, [c.rel for c in e.children or []]) for e in tree] == [("runs", ["runs/big.json"])]
    assert [n for n in os.listdir(root / "runs") if is_temp_name(n) or n.endswith(".tmp")] == []
    assert os.listdir(root / "runs") == ["big.json"]
    data = target.read_bytes()
    assert data in versions
    assert parse_thread(data).title == "big"
