"""settings/search.json: defaults, `$ENV` keys, base URL overrides, bad files."""

from __future__ import annotations

import pytest

from llmspace.errors import UserFacingError
from llmspace.jsonio import write_json_atomic
from llmspace.paths import DataRoot
from llmspace.settings.search import DEFAULTS, load_search_settings


def test_missing_file_is_created_with_the_reference_defaults(home) -> None:
    s = load_search_settings(DataRoot(home))
    path = home / "settings" / "search.json"
    assert path.read_bytes().endswith(b"}\n")
    assert s.raw == DEFAULTS and s.provider == "firecrawl"
    assert s.base_url("brave") == "https://api.search.brave.com"


def test_keys_are_literal_or_from_the_environment(home, monkeypatch) -> None:
    monkeypatch.setenv("MY_TAVILY", "tvly-abc")
    monkeypatch.delenv("BRAVE_SEARCH_API_KEY", raising=False)
    write_json_atomic(home / "settings" / "search.json", {"provider": "tavily", "tavilyApiKey": "$MY_TAVILY", "firecrawlApiKey": "fc-lit",
                                                           "searxngUrl": "${NOPE_UNSET}"}, trailing_newline=True)
    s = load_search_settings(DataRoot(home))
    assert (s.provider, s.key("tavily"), s.key("firecrawl"), s.key("brave"), s.searxng_url) == ("tavily", "tvly-abc", "fc-lit", "", "")


def test_an_unknown_provider_or_malformed_file_is_a_clear_error_and_is_kept(home) -> None:
    path = home / "settings" / "search.json"
    write_json_atomic(path, {"provider": "altavista"}, trailing_newline=True)
    with pytest.raises(UserFacingError, match="unknown search provider"):
        load_search_settings(DataRoot(home))
    path.write_text("{broken")
    with pytest.raises(UserFacingError, match="malformed JSON"):
        load_search_settings(DataRoot(home))
    assert path.read_text() == "{broken"
