"""Settings › Search logic without a display: the form's fields come from search.json,
are checked field by field, and are saved atomically with the keys the form does not show."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from llmspace.errors import UserFacingError
from llmspace.paths import DataRoot
from llmspace.presenters.search_page import SearchPagePresenter
from llmspace.settings.search import load_search_settings


@pytest.fixture
def presenter(home: Path) -> SearchPagePresenter:
    return SearchPagePresenter(DataRoot(home))


def test_the_fields_start_from_the_defaults_and_the_file_is_created(presenter: SearchPagePresenter, home: Path) -> None:
    values = presenter.load()
    assert values["provider"] == "firecrawl" and values["tavilyApiKey"] == "$TAVILY_API_KEY"
    assert values["braveBaseUrl"] == ""
    assert (home / "settings" / "search.json").exists()


def test_saving_keeps_unknown_keys_and_drops_empty_base_urls(presenter: SearchPagePresenter, home: Path) -> None:
    path = home / "settings" / "search.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"provider": "brave", "braveBaseUrl": "http://127.0.0.1:9", "team": {"x": 1}}), "utf-8")
    values = presenter.load()
    assert values["provider"] == "brave" and values["braveBaseUrl"] == "http://127.0.0.1:9"
    values.update(provider="tavily", tavilyApiKey=" tvly-123 ", braveBaseUrl="")
    assert presenter.changed(values)
    presenter.save(values)
    raw = path.read_text("utf-8")
    data = json.loads(raw)
    assert raw.endswith("\n") and data["team"] == {"x": 1} and data["provider"] == "tavily"
    assert data["tavilyApiKey"] == "tvly-123" and "braveBaseUrl" not in data
    settings = load_search_settings(DataRoot(home))
    assert settings.provider == "tavily" and settings.key("tavily") == "tvly-123"
    assert not presenter.changed(presenter.load())


@pytest.mark.parametrize(("field", "value", "message"), [
    ("provider", "bing", "Choose one of"),
    ("tavilyApiKey", "$", "variable name after $"),
    ("braveApiKey", "two words", "no spaces"),
    ("searxngUrl", "localhost:8080", "http://"),
    ("weatherBaseUrl", "ftp://wttr.in", "http://"),
])
def test_a_bad_field_is_named_and_nothing_is_saved(presenter: SearchPagePresenter, home: Path, field: str, value: str,
                                                   message: str) -> None:
    values = presenter.load()
    before = (home / "settings" / "search.json").read_bytes()
    values[field] = value
    assert message in presenter.validate(values)[field]
    with pytest.raises(UserFacingError, match="Nothing was saved"):
        presenter.save(values)
    assert (home / "settings" / "search.json").read_bytes() == before


def test_the_chosen_provider_needs_its_key_or_url(presenter: SearchPagePresenter) -> None:
    values = presenter.load()
    values.update(provider="searxng", searxngUrl="")
    assert "SearXNG needs the URL" in presenter.validate(values)["searxngUrl"]
    values.update(searxngUrl="$SEARX_URL")
    assert presenter.validate(values) == {}
    values.update(provider="brave", braveApiKey="")
    assert "needs an API key" in presenter.validate(values)["braveApiKey"]


def test_key_notes_say_whether_the_variable_is_set_without_its_value(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_TAVILY", "secret-value")
    monkeypatch.delenv("NOT_THERE", raising=False)
    assert SearchPagePresenter.key_note("$MY_TAVILY") == "$MY_TAVILY is set"
    assert SearchPagePresenter.key_note("${NOT_THERE}") == "$NOT_THERE is not set"
    assert SearchPagePresenter.key_note("literal") == "key saved in search.json"


def test_an_unreadable_file_is_reported_and_never_overwritten(presenter: SearchPagePresenter, home: Path) -> None:
    path = home / "settings" / "search.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("{broken", "utf-8")
    with pytest.raises(UserFacingError):
        presenter.load()
    values = {"provider": "brave", "braveApiKey": "k"}
    with pytest.raises(UserFacingError):
        presenter.save(values)
    assert path.read_text("utf-8") == "{broken"
