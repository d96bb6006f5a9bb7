"""Desktop app benchmarks (the budgets are in each row; `make bench` prints them):

- start → window mapped, 1,000-thread workspace, from source (subprocess; budget 0.6 s) and,
  when `build/dist/llmspace` exists, the single-file executable (budget 1.8 s);
- open the 10 MB / 5,000-message thread and show its first screen (budget 0.3 s);
- stream 2,000 tokens/s into an assistant card for 3 s; longest UI stall (budget 50 ms);
- the same with Markdown: a reply of code fences, tables and lists, drawn as Markdown while
  it streams (only the open block is parsed again); longest UI stall (budget 50 ms); and
  the worst cases of that rule, a 300-line code fence and one paragraph that never close
  (budget 50 ms each); each streams with the thread read-only, as in a run, and ends as a run
  does: the time the fence's reply takes to get its full height then is its own row (once a reply);
- executable size.

Needs a display: uses $DISPLAY, else starts its own Xvfb and waits (bounded) until it accepts
connections (`_ensure_display`).
"""

from __future__ import annotations

import os
import select
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
Row = tuple[str, Any, str, Any]


DISPLAY_TIMEOUT = 30.0  # seconds for a private Xvfb to accept connections (a loaded 2-core machine)


def _start_xvfb(xvfb: str, errors: Any, timeout: float) -> tuple[subprocess.Popen[bytes], str]:
    """Start Xvfb with `-displayfd`; (the process, the display number it wrote, or "" when it
    closed the pipe without one: it exited). Stops it and fails after `timeout` seconds."""
    read_fd, write_fd = os.pipe()
    try:
        proc = subprocess.Popen([xvfb, "-displayfd", str(write_fd), "-screen", "0", "1280x800x24", "-nolisten", "tcp"],
                                pass_fds=(write_fd,), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=errors)
    finally:
        os.close(write_fd)
    answer = b""
    deadline = time.monotonic() + timeout
    try:
        while b"\n" not in answer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([read_fd], [], [], left)[0]:
                proc.kill()
                proc.wait()
                raise RuntimeError(f"Xvfb did not open a display within {timeout:.0f} s (the machine may be "
                                   "overloaded); it was stopped. Try again, or set DISPLAY.")
            chunk = os.read(read_fd, 64)
            if not chunk:  # the pipe closed without a number: Xvfb exited
                break
            answer += chunk
    finally:
        os.close(read_fd)
    return proc, answer.strip().decode("ascii", "replace")


def _ensure_display(timeout: float = DISPLAY_TIMEOUT) -> subprocess.Popen[bytes] | None:
    """$DISPLAY when it is set (returns None); else a private Xvfb, returned once it accepts
    connections, with DISPLAY set. Xvfb picks a free display number and writes it to the pipe
    `-displayfd` names only when it is ready, so the benchmarks never connect to a server that
    is still starting or has failed. Waits at most `timeout` seconds; fails with the reason:
    Xvfb missing, Xvfb exited (its last words), or no display in time (the server is stopped)."""
    if os.environ.get("DISPLAY"):
        return None
    xvfb = shutil.which("Xvfb")
    if xvfb is None:
        raise RuntimeError("Xvfb is not installed: the UI benchmarks need a display. Install it "
                           "(apt-get install -y xvfb; scripts/setup-test-env.sh does) or set DISPLAY.")
    with tempfile.TemporaryFile() as errors:  # Xvfb's stderr: its last words if it fails
        proc, number = _start_xvfb(xvfb, errors, timeout)
        if not number.isdigit():
            try:
                status = proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                status = proc.wait()
            errors.seek(0)
            said = " / ".join(line.strip() for line in errors.read().decode("utf-8", "replace").splitlines()[-5:]
                              if line.strip())
            raise RuntimeError(f"Xvfb exited (status {status}) before its display was ready: {said or 'it said nothing'}")
    os.environ["DISPLAY"] = f":{number}"
    return proc


def _workspace(home: Path, n: int = 1000) -> None:
    ws = home / "workspace"
    for i in range(n):
        folder = ws / f"folder-{i // 100:02d}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"thread-{i:04d}.json").write_text(
            '{\n  "title": "t",\n  "context": {\n    "messages": []\n  }\n}', "utf-8")
    (ws / ".llmspace-seeded").write_text("seeded\n", "utf-8")


def _start_times(cmd: list[str], home: Path, runs: int = 5) -> list[float]:
    env = dict(os.environ, LLM_SPACE_HOME=str(home), LLMSPACE_EXIT_AFTER_MAP="1", LLMSPACE_NO_SYSTEM_PROBE="1",
               PYTHONPATH=str(ROOT))
    out = []
    for _ in range(runs):
        t0 = time.time()
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
        for line in proc.stdout.splitlines():
            if line.startswith("MAPPED "):
                out.append(float(line.split()[1]) - t0)
                break
        else:
            raise RuntimeError(f"the app did not map: {proc.stderr[-2000:]}")
    return out


def _markdown_import_time() -> float:
    """What the first reply of a process costs to import (start-up does not import them)."""
    code = ("import sys, time\nimport llmspace.ui.main_window\n"
            "assert 'markdown_it' not in sys.modules and 'pygments' not in sys.modules, 'imported at start-up'\n"
            "from llmspace.presenters.markdown import prepare\n"
            "t0 = time.perf_counter(); prepare(); print(time.perf_counter() - t0)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         env=dict(os.environ, PYTHONPATH=str(ROOT)))
    if out.returncode != 0:
        raise RuntimeError(out.stderr[-2000:])
    return float(out.stdout.strip().splitlines()[-1])


def _in_process(home: Path) -> list[Row]:
    os.environ["LLM_SPACE_HOME"] = str(home)
    import orjson

    from llmspace.app import App
    from llmspace.core.synthetic import big_thread_data
    from llmspace.jsonio import write_bytes_atomic
    from llmspace.ui.main_window import MainWindow

    data = big_thread_data()
    data["title"] = "big"
    write_bytes_atomic(home / "workspace" / "big.json", orjson.dumps(data, option=orjson.OPT_INDENT_2))
    app = App.from_env()
    win = MainWindow(app)
    win.root.geometry("1280x800+0+0")
    win.root.update()
    times = []
    for _ in range(3):
        t0 = time.perf_counter()
        win.open_thread("big.json")
        while win.editors.get("big.json") is None:
            win.root.update()
            time.sleep(0.001)
        win.root.update()
        times.append(time.perf_counter() - t0)
        win.tab_pages.close_tab("big.json")
        win.root.update()
    rows: list[Row] = [("ui: open 10 MB thread, first screen", statistics.median(times), "s", 0.3)]

    win.open_thread("big.json")
    while win.editors.get("big.json") is None:
        win.root.update()
        time.sleep(0.001)
    big = win.editors["big.json"]
    big.list.on_scrollbar("moveto", "0.3")
    win.root.update()
    steps = []
    for _ in range(40):
        t0 = time.perf_counter()
        big.list.scroll(1)
        win.root.update()
        steps.append(time.perf_counter() - t0)
    rows.append(("ui: scroll one message in the 10 MB thread (median)", statistics.median(steps) * 1000, "ms", 50))
    win.tab_pages.close_tab("big.json")
    win.root.update()

    rel = app.workspace.create_thread("", "stream")
    ed = win.open_thread(rel)
    win.root.update()
    words = ("the ", "quick ", "fox ", "jumps ", "over\n", "数据 ", "✓ ")
    win.appearance.markdown_var.set(False)  # the plain-text figure, as before Markdown replies
    win.appearance.apply_markdown()
    rows.append(("ui: longest stall while streaming 2,000 tok/s", _stream(win, ed, "bench-stream", words) * 1000, "ms", 50))
    win.appearance.markdown_var.set(True)
    win.appearance.apply_markdown()
    rows.append(("ui: longest stall streaming Markdown (fence, table, list) at 2,000 tok/s",
                 _stream(win, ed, "bench-markdown", markdown_tokens()) * 1000, "ms", 50))
    card = ed.list.cards.get("bench-markdown")  # checked now: later replies push it out of view
    assert card is not None and card.markdown is not None, "the streamed reply was not drawn as Markdown"
    rows.append(("ui: longest stall streaming a 300-line code fence as Markdown at 2,000 tok/s",
                 _stream(win, ed, "bench-fence", long_fence_tokens()) * 1000, "ms", 50))
    rows.append(("ui: the streamed 300-line fence takes its full height when its run ends (once)",
                 _ENDED[-1] * 1000, "ms", None))
    rows.append(("ui: longest stall streaming one 30,000-character paragraph as Markdown at 2,000 tok/s",
                 _stream(win, ed, "bench-paragraph", words) * 1000, "ms", 50))
    win.close()
    app.close()
    return rows


MARKDOWN_PIECE = (
    "## Step\n\nHere is the code:\n\n```python\n"
    + "".join(f"def handler_{i}(request, *, retries: int = {i}) -> dict[str, int]:\n"
              f"    \"\"\"Handle {i}.\"\"\"\n    return {{'status': 200, 'n': {i}}}  # ok\n" for i in range(12))
    + "```\n\n| name | value | note |\n|---|--:|:-:|\n"
    + "".join(f"| row {i} | {i * 17} | **bold** `x` |\n" for i in range(14))
    + "\n" + "".join(f"- item {i} with *emphasis* and a [link](https://example.org/{i})\n  - nested {i}\n" for i in range(10))
    + "\n")


def long_fence_tokens() -> tuple[str, ...]:
    """A code fence of 300 lines, never closed while it streams (~4-character tokens)."""
    code = "".join(f"    def method_{i}(self, value: int = {i}) -> str:\n        return f'{{value}}-{i}'  # note\n"
                   for i in range(150))
    text = "```python\nclass Service:\n" + code
    return tuple(text[i:i + 4] for i in range(0, len(text), 4))


def markdown_tokens() -> tuple[str, ...]:
    """The Markdown piece cut into ~4-character tokens (as a model streams them)."""
    return tuple(MARKDOWN_PIECE[i:i + 4] for i in range(0, len(MARKDOWN_PIECE), 4))


_ENDED: list[float] = []  # seconds each `_stream`'s run end took (the reply drawn at full height)


def _stream(win: Any, ed: Any, mid: str, words: tuple[str, ...], seconds: float = 3.0) -> float:
    """Stream `words` (cycled) at 2,000 tokens/s into a new assistant message, the thread
    read-only as during a run; the longest gap between two 10 ms heartbeats of the Tk loop, in
    seconds. Then the run ends as a run does (the thread editable again, the list drawn again,
    the reply at its full height): its time goes to `_ENDED`."""
    import gc

    from llmspace.presenters.messages import MessageIntents

    gc.collect()  # the garbage of the phase before (the closed 10 MB thread) is not this phase's stall
    msg = MessageIntents.new_message("assistant")
    msg.id = mid
    ed.p.thread.ensure_messages().append(msg)
    ed.p.read_only = True  # as a run does (the list caps a streaming reply's box while it runs)
    ed.list.scroll_to_end()
    win.root.update()
    if ed.list.markdown:
        # a run's reply card imports the Markdown libraries on a worker while the model
        # prepares its first token; wait for that here (the cold cost is its own row)
        from llmspace.ui.editor.markdown_text import warm_up

        warming = warm_up(win.pump)
        while not warming.done():
            win.root.update()
            time.sleep(0.001)
    deadline = time.monotonic() + 10
    while ed.list.fitting and time.monotonic() < deadline:  # the boxes drawn before the run, settled
        win.root.update()
        time.sleep(0.001)
    gaps: list[float] = []
    last = [time.perf_counter()]
    done = threading.Event()

    def tick() -> None:
        now = time.perf_counter()
        gaps.append(now - last[0])
        last[0] = now
        if not done.is_set():
            win.root.after(10, tick)

    def producer() -> None:
        start = time.perf_counter()
        n = 0
        while time.perf_counter() - start < seconds:
            n += 1
            win.pump.post_text(("bench", mid), words[n % len(words)], lambda s: ed.run.append_text(mid, s))
            target = start + n / 2000.0
            delay = target - time.perf_counter()
            if delay > 0:
                time.sleep(delay)
        done.set()

    threading.Thread(target=producer, daemon=True).start()
    win.root.after(10, tick)
    while not done.is_set():
        win.root.update()
        time.sleep(0.001)
    win.root.update()
    stall = max(gaps[1:])  # (taken now: the run's end below is not a streaming stall)
    t0 = time.perf_counter()
    ed.p.read_only = False  # the run ended (run.py `_end`: ReadOnlyChanged draws the list again)
    ed.list.render()
    deadline = time.monotonic() + 10
    while ed.list.fitting and time.monotonic() < deadline:  # until its box has its full height
        win.root.update()
        time.sleep(0.001)
    win.root.update()
    _ENDED.append(time.perf_counter() - t0)
    return stall


def run() -> list[Row]:
    xvfb = _ensure_display()
    tmp = Path(tempfile.mkdtemp(prefix="llmspace-bench-ui-"))
    try:
        home = tmp / "home"
        _workspace(home)
        rows: list[Row] = []
        t = _start_times([sys.executable, "-m", "llmspace"], home)
        rows.append(("ui: start to window mapped, 1,000 threads (source)", statistics.median(t), "s", 0.6))
        exe = ROOT / "build" / "dist" / "llmspace"
        if exe.is_file():
            t = _start_times([str(exe)], home, runs=3)
            rows.append(("ui: start to window mapped, 1,000 threads (single file)", statistics.median(t), "s", 1.8))
            rows.append(("ui: executable size", round(exe.stat().st_size / 1e6, 1), "MB", None))
        rows.append(("ui: first Markdown reply, importing markdown-it-py and Pygments (once, on a worker)",
                     _markdown_import_time(), "s", None))
        rows.extend(_in_process(home))
        return rows
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        if xvfb is not None:
            xvfb.terminate()
            xvfb.wait(5)


if __name__ == "__main__":
    for row in run():
        print(row)
