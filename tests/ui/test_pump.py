"""The UI pump: work posted from other threads runs on the draining thread, streamed text
for one key is coalesced into one call per tick, order is kept around callbacks, a failing
callback does not stop the others, and a tick stops at its budget."""

from __future__ import annotations

import threading

from llmspace.ui.pump import Pump


class FakeWidget:
    def __init__(self) -> None:
        self.jobs: list = []

    def after(self, ms, fn):
        self.jobs.append(fn)
        return f"job{len(self.jobs)}"

    def after_cancel(self, job):
        pass


def test_text_for_one_key_arrives_as_one_string_per_tick():
    pump = Pump(FakeWidget())
    got: list[str] = []
    producer = threading.Thread(target=lambda: [pump.post_text("k", f"{i},", got.append) for i in range(10_000)])
    producer.start()
    producer.join()
    pump.drain()
    assert len(got) == 1 and got[0] == "".join(f"{i}," for i in range(10_000))


def test_order_is_kept_around_callbacks_and_errors_do_not_stop_the_tick():
    # a budget no tick reaches: logging the error's traceback took more than the default
    # 12 ms on a loaded machine, and the tick then rightly left the rest for the next one
    pump = Pump(FakeWidget(), budget_ms=60_000)
    seen: list[str] = []
    pump.post_text("k", "a", lambda s: seen.append("text:" + s))
    pump.post(lambda: seen.append("started"))
    pump.post(lambda: 1 / 0)
    pump.post_text("k", "b", lambda s: seen.append("text:" + s))
    pump.post_text("k", "c", lambda s: seen.append("text:" + s))
    pump.drain()
    assert seen == ["text:a", "started", "text:bc"]


def test_a_tick_stops_at_its_budget_and_the_rest_waits():
    pump = Pump(FakeWidget(), budget_ms=0.0)
    ran: list[int] = []
    for i in range(5):
        pump.post(ran.append, i)
    pump.drain()
    assert ran == [0]
    while pump.drain():
        pass
    assert ran == [0, 1, 2, 3, 4]


def test_start_schedules_ticks_and_stop_ends_them():
    w = FakeWidget()
    pump = Pump(w)
    pump.start()
    assert len(w.jobs) == 1
    w.jobs[0]()
    assert pump.ticks == 1 and len(w.jobs) == 2
    pump.stop()
    w.jobs[1]()
    assert pump.ticks == 1


def _drain_until(pump: Pump, cond, timeout: float = 10.0) -> None:
    import time

    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, "nothing delivered in time"
        pump.drain()
        time.sleep(0.002)


def test_work_in_a_worker_reports_its_result_on_the_draining_thread():
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=1) as pool:
        pump = Pump(FakeWidget(), executor=pool)
        seen: list = []
        worker_names: list[str] = []

        def work() -> int:
            worker_names.append(threading.current_thread().name)
            return 42

        pump.run_in_worker(work, lambda f: seen.append((f.result(), threading.current_thread())), name="answer")
        _drain_until(pump, lambda: seen)
    assert seen == [(42, threading.current_thread())]
    assert worker_names[0].endswith(":answer") and worker_names[0] != threading.current_thread().name


def test_an_exception_in_a_worker_reaches_on_done_through_the_future():
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=1) as pool:
        pump = Pump(FakeWidget(), executor=pool)
        seen: list = []

        def boom() -> None:
            raise ValueError("no")

        pump.run_in_worker(boom, lambda f: seen.append(f.exception()))
        _drain_until(pump, lambda: seen)
    assert isinstance(seen[0], ValueError) and str(seen[0]) == "no"


def test_a_pump_without_a_worker_pool_refuses_work():
    import pytest

    with pytest.raises(RuntimeError):
        Pump(FakeWidget()).run_in_worker(lambda: None)


def test_the_app_closes_its_worker_pool(app):
    pool = app.workers
    app.close()
    import pytest

    with pytest.raises(RuntimeError):
        pool.submit(lambda: None)
