"""web_fetch, web_search and weather_report against a loopback server that replays each
provider's documented wire format (Firecrawl v2, Tavily, Brave, SearXNG, wttr.in j1)."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from llmspace.core.model import ToolCall, ToolCallOutput
from llmspace.jsonio import write_json_atomic
from llmspace.tools.base import ToolContext
from llmspace.tools.builtins import builtin_tool

from .web_server import WebServer


@pytest.fixture
def server() -> Iterator[WebServer]:
    s = WebServer()
    yield s
    s.close()


@pytest.fixture(autouse=True)
def no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("FIRECRAWL_API_KEY", "TAVILY_API_KEY", "BRAVE_SEARCH_API_KEY"):
        monkeypatch.delenv(name, raising=False)


def configure(home: Path, base: str, **settings: Any) -> None:
    data = {"firecrawlBaseUrl": base, "tavilyBaseUrl": base, "braveBaseUrl": base, "weatherBaseUrl": base, **settings}
    write_json_atomic(home / "settings" / "search.json", data, trailing_newline=True)


def call(app, name: str, **arguments: Any) -> ToolCallOutput:
    c = ToolCall.model_validate({"id": "c", "input": {"name": name, "arguments": arguments}})
    return app.tools.execute(builtin_tool(name), c, ToolContext(working_directory=str(app.root.root), data_root=app.root), timeout=30)


def closed_port_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}"


# -- Firecrawl ------------------------------------------------------------------------------------


def test_firecrawl_fetch_without_a_key_sends_no_authorization(app, home, server) -> None:
    configure(home, server.url, provider="firecrawl")
    server.route("POST", "/v2/scrape", (200, {"success": True, "data": {"markdown": "# Hello", "metadata": {"title": "Example Domain", "statusCode": 200}}}))
    out = call(app, "web_fetch", url="https://example.com")
    assert out.isError is False
    assert json.loads(out.text()) == {"url": "https://example.com", "title": "Example Domain", "content": "# Hello",
                                       "metadata": {"title": "Example Domain", "statusCode": 200}}
    req = server.seen[0]
    assert req.body == {"url": "https://example.com", "formats": ["markdown"], "onlyMainContent": True}
    assert "authorization" not in req.headers


def test_firecrawl_fetch_uses_the_key_from_the_environment_and_truncates(app, home, server, monkeypatch) -> None:
    monkeypatch.setenv("FIRECRAWL_API_KEY", "fc-secret-123456")
    configure(home, server.url, provider="firecrawl", firecrawlApiKey="$FIRECRAWL_API_KEY")
    server.route("POST", "/v2/scrape", (200, {"success": True, "data": {"markdown": "a" * 25_000}}))
    out = call(app, "web_fetch", url="https://example.com/long")
    data = json.loads(out.text())
    assert data["content"] == "a" * 20_000 + "\n\n[Content truncated]"
    assert server.seen[0].headers["authorization"] == "Bearer fc-secret-123456"


def test_firecrawl_errors_surface_the_error_field_or_the_status(app, home, server) -> None:
    configure(home, server.url, provider="firecrawl")
    server.route("POST", "/v2/scrape", (402, {"success": False, "error": "Insufficient credits to perform this request."}))
    out = call(app, "web_fetch", url="https://example.com")
    assert out.isError is True and out.text() == "Insufficient credits to perform this request."
    server.route("POST", "/v2/scrape", (500, b""))
    assert call(app, "web_fetch", url="https://example.com").text() == "web_fetch failed: 500"


def test_firecrawl_search_maps_results_and_content(app, home, server) -> None:
    configure(home, server.url, provider="firecrawl")
    server.route("POST", "/v2/search", (200, {"success": True, "data": {"web": [
        {"url": "https://a.example", "title": "A", "description": "about a", "markdown": "m" * 3000},
        {"url": "https://b.example", "description": "about b"},
    ]}}))
    out = call(app, "web_search", query="tk", limit=2, includeContent=True)
    assert json.loads(out.text()) == [
        {"title": "A", "url": "https://a.example", "snippet": "about a", "content": "m" * 2000},
        {"title": "Untitled", "url": "https://b.example", "snippet": "about b"},
    ]
    assert server.seen[0].body == {"query": "tk", "limit": 2, "scrapeOptions": {"formats": ["markdown"], "onlyMainContent": True}}
    call(app, "web_search", query="tk")
    assert server.seen[1].body == {"query": "tk", "limit": 5}


# -- Tavily ----------------------------------------------------------------------------------------


def test_tavily_needs_a_key(app, home, server) -> None:
    configure(home, server.url, provider="tavily")
    out = call(app, "web_search", query="x")
    assert out.isError is True and out.text() == "Tavily API key is not configured. Add one in Settings → Search."
    assert server.seen == []


def test_tavily_search_and_extract(app, home, server) -> None:
    configure(home, server.url, provider="tavily", tavilyApiKey="tvly-literal-key")
    server.route("POST", "/search", (200, {"query": "q", "results": [
        {"title": "T", "url": "https://t.example", "content": "snip", "raw_content": "raw page", "score": 0.9}], "response_time": 0.4}))
    server.route("POST", "/extract", (200, {"results": [{"url": "https://t.example", "raw_content": "# Page", "images": []}], "failed_results": []}))
    out = call(app, "web_search", query="q", includeContent=True)
    assert json.loads(out.text()) == [{"title": "T", "url": "https://t.example", "snippet": "snip", "content": "raw page"}]
    assert server.seen[0].body == {"query": "q", "max_results": 5, "include_raw_content": "markdown"}
    assert server.seen[0].headers["authorization"] == "Bearer tvly-literal-key"
    out = call(app, "web_fetch", url="https://t.example")
    assert json.loads(out.text()) == {"url": "https://t.example", "content": "# Page"}
    assert server.seen[1].body == {"urls": ["https://t.example"], "format": "markdown"}
    call(app, "web_search", query="q")
    assert server.seen[2].body["include_raw_content"] is False


# -- Brave -------------------------------------------------------------------------------------------


def test_brave_without_a_key_says_where_to_add_one(app, home, server) -> None:
    configure(home, server.url, provider="brave")
    out = call(app, "web_search", query="x")
    assert out.isError is True and out.text() == "Brave Search API key is not configured. Add one in Settings → Search."


def test_brave_search_query_headers_and_extra_snippets(app, home, server, monkeypatch) -> None:
    monkeypatch.setenv("BRAVE_SEARCH_API_KEY", "BSA-key-987654")
    configure(home, server.url, provider="brave")
    server.route("GET", "/res/v1/web/search", (200, {"type": "search", "web": {"type": "search", "results": [
        {"title": "Brave", "url": "https://brave.example", "description": "desc", "extra_snippets": ["one", "two"]}]}}))
    out = call(app, "web_search", query="hello world", limit=50, includeContent=True)
    assert json.loads(out.text()) == [{"title": "Brave", "url": "https://brave.example", "snippet": "desc", "content": "desc\n\none\n\ntwo"}]
    req = server.seen[0]
    assert req.query == {"q": ["hello world"], "count": ["20"], "text_decorations": ["false"], "extra_snippets": ["true"]}
    assert req.headers["x-subscription-token"] == "BSA-key-987654"


def test_brave_api_errors_are_shown_verbatim(app, home, server) -> None:
    configure(home, server.url, provider="brave", braveApiKey="bad-key-000")
    server.route("GET", "/res/v1/web/search", (422, {"type": "ErrorResponse", "error": {
        "id": "x", "status": 422, "code": "SUBSCRIPTION_TOKEN_INVALID", "detail": "The provided subscription token is invalid.", "meta": {}}}))
    out = call(app, "web_search", query="x")
    assert out.isError is True and out.text() == "The provided subscription token is invalid."


def test_brave_search_refuses_a_redirect_to_another_origin_and_its_key_never_goes_there(app, home, server) -> None:
    other = WebServer()  # another port of the same host: another origin
    try:
        other.route("GET", "/res/v1/web/search", (200, {"web": {"results": []}}))
        configure(home, server.url, provider="brave", braveApiKey="BSA-key-987654")
        server.route("GET", "/res/v1/web/search", (302, b"", {"Location": f"{other.url}/res/v1/web/search?q=x"}))
        out = call(app, "web_search", query="x")
        assert other.seen == []
        assert out.isError is True and f"redirected to another origin {other.url}" in out.text()
        assert "BSA-key-987654" not in out.text()
    finally:
        other.close()


def test_a_redirect_on_the_search_providers_own_origin_is_followed(app, home, server) -> None:
    configure(home, server.url, provider="brave", braveApiKey="BSA-key-987654")
    server.route("GET", "/res/v1/web/search", (307, b"", {"Location": "/v2/res/v1/web/search?q=x"}))
    server.route("GET", "/v2/res/v1/web/search", (200, {"web": {"results": [{"title": "T", "url": "https://t.example"}]}}))
    assert json.loads(call(app, "web_search", query="x").text()) == [{"title": "T", "url": "https://t.example"}]
    assert server.seen[1].headers["x-subscription-token"] == "BSA-key-987654"


def test_brave_fetch_goes_through_firecrawl(app, home, server) -> None:
    configure(home, server.url, provider="brave", braveApiKey="k-123456")
    server.route("POST", "/v2/scrape", (200, {"success": True, "data": {"markdown": "via firecrawl"}}))
    assert json.loads(call(app, "web_fetch", url="https://x.example").text())["content"] == "via firecrawl"
    assert server.seen[0].path == "/v2/scrape"


# -- SearXNG -----------------------------------------------------------------------------------------


def test_searxng_search_uses_the_configured_url(app, home, server) -> None:
    configure(home, "http://unused.invalid", provider="searxng", searxngUrl=server.url + "/")
    server.route("GET", "/search", (200, {"query": "cats", "number_of_results": 0, "results": [
        {"url": "https://c1.example", "title": "Cats", "content": "meow", "engine": "duckduckgo", "score": 1.0},
        {"url": "https://c2.example", "title": "", "content": "", "engine": "bing"},
        {"url": "https://c3.example", "title": "More", "content": "x", "engine": "bing"}]}))
    out = call(app, "web_search", query="cats", limit=2)
    assert json.loads(out.text()) == [{"title": "Cats", "url": "https://c1.example", "snippet": "meow"},
                                      {"title": "Untitled", "url": "https://c2.example"}]
    assert server.seen[0].query == {"q": ["cats"], "format": ["json"]}


def test_searxng_unconfigured_or_json_disabled(app, home, server) -> None:
    configure(home, server.url, provider="searxng")
    assert call(app, "web_search", query="x").text() == "SearXNG URL is not configured. Add one in Settings → Search."
    configure(home, server.url, provider="searxng", searxngUrl=server.url)
    server.route("GET", "/search", (403, b"Forbidden"))
    out = call(app, "web_search", query="x")
    assert out.isError is True and "json" in out.text()


# -- offline -------------------------------------------------------------------------------------------


def test_an_unreachable_provider_is_a_clear_error(app, home) -> None:
    configure(home, closed_port_url(), provider="firecrawl")
    out = call(app, "web_search", query="x")
    assert out.isError is True and out.text().startswith("Could not reach Firecrawl (127.0.0.1:")
    assert call(app, "weather_report", location="Paris").text().startswith("Could not reach wttr.in")


def test_errors_never_contain_the_api_key(app, home, server) -> None:
    configure(home, server.url, provider="firecrawl", firecrawlApiKey="fc-very-secret-key")
    server.route("POST", "/v2/search", (401, {"success": False, "error": "Invalid token fc-very-secret-key"}))
    out = call(app, "web_search", query="x")
    assert out.isError is True and "fc-very-secret-key" not in out.text()


# -- weather_report -----------------------------------------------------------------------------------------


WTTR = {
    "current_condition": [{"temp_C": "12", "weatherDesc": [{"value": "Sunny"}]}],
    "nearest_area": [{"areaName": [{"value": "Paris"}], "country": [{"value": "France"}]}],
    "weather": [{"date": "2026-11-29", "maxtempC": "14", "mintempC": "6", "hourly": [
        {"time": "0", "weatherDesc": [{"value": "Clear"}]}, {"time": "1200", "weatherDesc": [{"value": "Partly cloudy"}]}]}],
}


def test_weather_report_reads_the_noon_forecast(app, home, server) -> None:
    configure(home, server.url)
    server.route("GET", "/New+York", (200, WTTR))
    out = call(app, "weather_report", location="New York")
    assert json.loads(out.text()) == {"city": "Paris", "date": "2026-11-29", "weather": "Partly cloudy",
                                      "temperature": {"unit": "celsius", "max": 14, "min": 6}}
    assert server.seen[0].query == {"format": ["j1"], "lang": ["en"]}


def test_weather_report_falls_back_to_current_then_unknown(app, home, server) -> None:
    configure(home, server.url)
    no_noon = json.loads(json.dumps(WTTR))
    no_noon["weather"][0]["hourly"] = []
    server.route("GET", "/Oslo", (200, no_noon))
    assert json.loads(call(app, "weather_report", location="Oslo").text())["weather"] == "Sunny"
    del no_noon["current_condition"]
    assert json.loads(call(app, "weather_report", location="Oslo").text())["weather"] == "Unknown"
