"""Crash safety: a writer killed with SIGKILL at random instants never leaves a torn thread."""

from __future__ import annotations

import os
import random
import select
import signal
import time
from pathlib import Path

import pytest

from llmspace.core.synthetic import big_thread_data
from llmspace.core.threadio import parse_thread, serialize_thread, thread_from_data
from llmspace.core.workspace import Workspace

KILLS = 200


def _writer(root: Path, versions: list, ready_fd: int) -> None:
    """Child process body: save the two versions alternately forever, signalling after the first save."""
    try:
        ws = Workspace(root, use_os_trash=False)
        ws.save("t.json", versions[0])
        os.write(ready_fd, b"x")
        i = 1
        while True:
            ws.save("t.json", versions[i % 2])
            i += 1
    finally:
        os._exit(1)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_thread_file_always_parses_as_old_or_new_after_sigkill(tmp_path: Path):
    root = tmp_path / "w"
    root.mkdir()
    old = thread_from_data(big_thread_data(200_000, 60, images=1, seed=1))
    new = thread_from_data(big_thread_data(200_000, 60, images=1, seed=2))
    old.title = new.title = "t"
    expected = {serialize_thread(old), serialize_thread(new)}
    rng = random.Random(1234)
    seen: set[bytes] = set()
    for _ in range(KILLS):
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:  # child
            os.close(r)
            _writer(root, [old, new], w)
        os.close(w)
        ready, _, _ = select.select([r], [], [], 30)
        assert ready, "the writer did not start within 30 s"
        assert os.read(r, 1) == b"x"
        os.close(r)
        time.sleep(rng.uniform(0, 0.006))  # the random instant of the kill (not a synchronisation wait)
        os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
        assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
        raw = (root / "t.json").read_bytes()
        assert raw in expected, "torn or foreign content after a kill"
        parse_thread(raw)
        seen.add(raw)
    assert len(seen) == 2  # kills landed while both versions were being written
    listed = [e.name for e in Workspace(root, use_os_trash=False).list_tree()]
    assert listed == ["t.json"]  # leftover temp files (hidden) never show up as threads
