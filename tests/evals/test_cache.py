"""The response cache: keyed per repeat, a damaged entry is a miss, pruned to its size cap
(oldest first), cleared; and no credential reaches the cache, journal or results."""

from __future__ import annotations

import os
from pathlib import Path

from llmspace.cli import main
from llmspace.evals.cache import ResponseCache, cache_key, clear
from tests.evals.support import Oracle, arithmetic_and_extraction, write_eval
from tests.support.llm_server import LoopbackLLM

REQUEST = {"system": "s", "messages": [{"role": "user", "text": "hi"}], "tools": [], "params": None}


def test_keys_differ_by_repeat_model_base_url_and_request():
    base = cache_key("loop", "m", "http://a/v1", REQUEST, 1)
    assert base == cache_key("loop", "m", "http://a/v1", dict(REQUEST), 1)
    others = {cache_key("loop", "m", "http://a/v1", REQUEST, 2), cache_key("loop", "m2", "http://a/v1", REQUEST, 1),
              cache_key("loop", "m", "http://b/v1", REQUEST, 1), cache_key("loop", "m", "http://a/v1", {**REQUEST, "system": "t"}, 1)}
    assert base not in others and len(others) == 4


def test_a_damaged_entry_is_a_miss(tmp_path):
    cache = ResponseCache(tmp_path)
    key = cache_key("loop", "m", "u", REQUEST, 1)
    cache.put(key, {"output": "x"})
    assert cache.get(key) == {"output": "x"}
    next(tmp_path.rglob("*.json")).write_text("{torn", encoding="utf-8")
    assert cache.get(key) is None


def test_prune_removes_the_oldest_entries_until_under_the_cap_and_clear_empties_it(tmp_path):
    cache = ResponseCache(tmp_path, cap_bytes=2500)
    keys = [cache_key("loop", "m", "u", REQUEST, r) for r in range(1, 6)]
    for age, key in enumerate(keys):
        cache.put(key, {"output": "y" * 900})
        path = next(p for p in tmp_path.rglob("*.json") if p.stem == key)
        os.utime(path, (1_000_000 + age, 1_000_000 + age))
    assert cache.prune() == 3
    assert [cache.get(k) is not None for k in keys] == [False, False, False, True, True]
    assert clear(tmp_path)[0] == 2 and not list(tmp_path.rglob("*.json"))


def test_no_api_key_is_written_to_the_cache_journal_or_results(home: Path):
    with LoopbackLLM() as srv:
        srv.responder = Oracle()
        path = write_eval(home, srv, arithmetic_and_extraction(2))
        assert main(["eval", "run", str(path)]) == 0
    written = [p for root in (home / "evals", home / "cache" / "eval") for p in root.rglob("*") if p.is_file()]
    assert len(written) >= 7
    for p in written:
        assert b"sk-loopback-test-key-0001" not in p.read_bytes(), p
