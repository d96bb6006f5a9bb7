"""Web built-ins: web_fetch, web_search, weather_report.

Providers come from `settings/search.json` (`settings/search.py`): Firecrawl (keyless free
tier allowed), Tavily and Brave (keys required) and a self-hosted SearXNG URL. Brave and
SearXNG delegate `web_fetch` to Firecrawl (the app never fetches arbitrary URLs itself).
Weather comes from wttr.in. Base URLs are overridable in the settings file (tests point
them at a loopback server). Errors never contain API keys, and a key goes only to its
provider's origin: every request goes through `OriginSession` (`llmspace/origin_session.py`),
so a redirect to another origin is refused before anything is sent there (Brave's
`X-Subscription-Token` would otherwise follow it; `requests` drops only `Authorization`).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote, urlsplit

import requests

from ...errors import redact
from ...origin_session import OriginSession
from ...settings.search import SearchSettings, load_search_settings
from ..base import CallEnv, ToolError

FETCH_CHAR_LIMIT = 20_000
FETCH_TRUNCATED = "\n\n[Content truncated]"
SEARCH_CONTENT_LIMIT = 2_000
CONNECT_TIMEOUT = 10.0
READ_TIMEOUT = 60.0
USER_AGENT = "llm-space-python"


def _settings(env: CallEnv) -> SearchSettings:
    override = env.settings.get("search")
    if isinstance(override, SearchSettings):
        return override
    return load_search_settings(env.ctx.data_root)


def _not_configured(label: str) -> ToolError:
    return ToolError(f"{label} API key is not configured. Add one in Settings → Search.")


def _request(env: CallEnv, settings: SearchSettings, label: str, method: str, url: str, **kwargs: Any) -> requests.Response:
    headers = {"User-Agent": USER_AGENT, "Accept": "application/json", **kwargs.pop("headers", {})}
    read_timeout = min(READ_TIMEOUT, env.timeout) if env.timeout else READ_TIMEOUT
    try:
        with OriginSession() as session:
            return session.request(method, url, headers=headers, timeout=(CONNECT_TIMEOUT, read_timeout), **kwargs)
    except requests.RequestException as exc:
        host = urlsplit(url).netloc
        reason = redact(str(exc.__class__.__name__ if not str(exc) else exc), settings.secrets())
        raise ToolError(f"Could not reach {label} ({host}): {reason}. Check the network connection and Settings → Search.") from None


def _json(response: requests.Response, label: str) -> Any:
    try:
        return response.json()
    except ValueError:
        raise ToolError(f"{label} returned a response that is not JSON (HTTP {response.status_code}).") from None


def _truncate(text: str, limit: int, marker: str = "") -> str:
    return text if len(text) <= limit else text[:limit] + marker


# -- web_fetch -----------------------------------------------------------------------------------


def _firecrawl(env: CallEnv, s: SearchSettings, path: str, body: dict[str, Any], tool: str) -> Any:
    """POST `body` to Firecrawl's `path`; its JSON answer, or a ToolError with Firecrawl's error
    (redacted) or `<tool> failed: <status>`."""
    key = s.key("firecrawl")
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    resp = _request(env, s, "Firecrawl", "POST", f"{s.base_url('firecrawl')}{path}", json=body, headers=headers)
    data = _json(resp, "Firecrawl") if resp.content else {}
    if not resp.ok or (isinstance(data, dict) and data.get("success") is False):
        error = data.get("error") if isinstance(data, dict) else None
        raise ToolError(redact(str(error), s.secrets()) if error else f"{tool} failed: {resp.status_code}")
    return data


def _firecrawl_fetch(env: CallEnv, s: SearchSettings, url: str) -> dict[str, Any]:
    body = {"url": url, "formats": ["markdown"], "onlyMainContent": True}
    data = _firecrawl(env, s, "/v2/scrape", body, "web_fetch")
    page = data.get("data") if isinstance(data, dict) else None
    page = page if isinstance(page, dict) else {}
    metadata = page.get("metadata") if isinstance(page.get("metadata"), dict) else None
    result: dict[str, Any] = {"url": url}
    title = (metadata or {}).get("title")
    if isinstance(title, str) and title:
        result["title"] = title
    result["content"] = _truncate(str(page.get("markdown") or ""), FETCH_CHAR_LIMIT, FETCH_TRUNCATED)
    if metadata:
        result["metadata"] = metadata
    return result


def _tavily_fetch(env: CallEnv, s: SearchSettings, url: str) -> dict[str, Any]:
    key = s.key("tavily")
    if not key:
        raise _not_configured("Tavily")
    body = {"urls": [url], "format": "markdown"}
    resp = _request(env, s, "Tavily", "POST", f"{s.base_url('tavily')}/extract", json=body, headers={"Authorization": f"Bearer {key}"})
    data = _json(resp, "Tavily") if resp.content else {}
    if not resp.ok:
        raise ToolError(_tavily_error(data) or f"web_fetch failed: {resp.status_code}")
    results = data.get("results") if isinstance(data, dict) else None
    if not results:
        failed = data.get("failed_results") if isinstance(data, dict) else None
        reason = failed[0].get("error") if failed and isinstance(failed[0], dict) else None
        raise ToolError(f"web_fetch failed: {reason or 'no content returned'}")
    first = results[0] if isinstance(results[0], dict) else {}
    return {"url": first.get("url") or url, "content": _truncate(str(first.get("raw_content") or ""), FETCH_CHAR_LIMIT, FETCH_TRUNCATED)}


def _tavily_error(data: Any) -> str | None:
    if not isinstance(data, dict):
        return None
    detail = data.get("detail")
    if isinstance(detail, dict):
        detail = detail.get("error") or detail.get("message")
    return str(detail or data.get("error") or "") or None


def web_fetch(args: dict[str, Any], env: CallEnv) -> dict[str, Any]:
    url = str(args["url"]).strip()
    if urlsplit(url).scheme not in ("http", "https"):
        raise ToolError(f"web_fetch needs an absolute http(s) URL, got {url!r}.")
    s = _settings(env)
    if s.provider == "tavily":
        return _tavily_fetch(env, s, url)
    return _firecrawl_fetch(env, s, url)


# -- web_search ---------------------------------------------------------------------------------------


def _item(title: Any, url: Any, snippet: Any = None, content: Any = None) -> dict[str, Any]:
    item: dict[str, Any] = {"title": title if isinstance(title, str) and title else "Untitled", "url": str(url or "")}
    if isinstance(snippet, str) and snippet:
        item["snippet"] = snippet
    if isinstance(content, str) and content:
        item["content"] = _truncate(content, SEARCH_CONTENT_LIMIT)
    return item


def _firecrawl_search(env: CallEnv, s: SearchSettings, query: str, limit: int, include: bool) -> list[dict[str, Any]]:
    body: dict[str, Any] = {"query": query, "limit": limit}
    if include:
        body["scrapeOptions"] = {"formats": ["markdown"], "onlyMainContent": True}
    data = _firecrawl(env, s, "/v2/search", body, "web_search")
    found = data.get("data") if isinstance(data, dict) else None
    if isinstance(found, dict):
        found = found.get("web")
    rows = found if isinstance(found, list) else []
    return [_item(r.get("title"), r.get("url"), r.get("description"), r.get("markdown") if include else None) for r in rows if isinstance(r, dict)][:limit]


def _tavily_search(env: CallEnv, s: SearchSettings, query: str, limit: int, include: bool) -> list[dict[str, Any]]:
    key = s.key("tavily")
    if not key:
        raise _not_configured("Tavily")
    body = {"query": query, "max_results": limit, "include_raw_content": "markdown" if include else False}
    resp = _request(env, s, "Tavily", "POST", f"{s.base_url('tavily')}/search", json=body, headers={"Authorization": f"Bearer {key}"})
    data = _json(resp, "Tavily") if resp.content else {}
    if not resp.ok:
        raise ToolError(_tavily_error(data) or f"web_search failed: {resp.status_code}")
    rows = data.get("results") if isinstance(data, dict) else None
    return [_item(r.get("title"), r.get("url"), r.get("content"), r.get("raw_content") if include else None) for r in rows or [] if isinstance(r, dict)][:limit]


def _brave_search(env: CallEnv, s: SearchSettings, query: str, limit: int, include: bool) -> list[dict[str, Any]]:
    key = s.key("brave")
    if not key:
        raise ToolError("Brave Search API key is not configured. Add one in Settings → Search.")
    params: dict[str, Any] = {"q": query, "count": max(1, min(limit, 20)), "text_decorations": "false"}
    if include:
        params["extra_snippets"] = "true"
    resp = _request(env, s, "Brave Search", "GET", f"{s.base_url('brave')}/res/v1/web/search", params=params, headers={"X-Subscription-Token": key})
    data = _json(resp, "Brave Search") if resp.content else {}
    if not resp.ok:
        error = data.get("error") if isinstance(data, dict) else None
        detail = error.get("detail") if isinstance(error, dict) else error
        raise ToolError(redact(str(detail), [key]) if detail else f"web_search failed: {resp.status_code}")
    web = data.get("web") if isinstance(data, dict) else None
    rows = web.get("results") if isinstance(web, dict) else None
    out = []
    for r in rows or []:
        if not isinstance(r, dict):
            continue
        content = None
        if include:
            parts = [r.get("description"), *(r.get("extra_snippets") or [])]
            content = "\n\n".join(p for p in parts if isinstance(p, str) and p)
        out.append(_item(r.get("title"), r.get("url"), r.get("description"), content))
    return out[:limit]


def _searxng_search(env: CallEnv, s: SearchSettings, query: str, limit: int, include: bool) -> list[dict[str, Any]]:
    base = s.searxng_url
    if not base:
        raise ToolError("SearXNG URL is not configured. Add one in Settings → Search.")
    resp = _request(env, s, "SearXNG", "GET", f"{base}/search", params={"q": query, "format": "json"})
    if resp.status_code == 403:
        raise ToolError("SearXNG refused JSON output (HTTP 403): enable the json format under search.formats in its settings.yml.")
    if not resp.ok:
        raise ToolError(f"web_search failed: {resp.status_code}")
    data = _json(resp, "SearXNG")
    rows = data.get("results") if isinstance(data, dict) else None
    return [_item(r.get("title"), r.get("url"), r.get("content"), r.get("content") if include else None) for r in rows or [] if isinstance(r, dict)][:limit]


_SEARCH = {"firecrawl": _firecrawl_search, "tavily": _tavily_search, "brave": _brave_search, "searxng": _searxng_search}


def web_search(args: dict[str, Any], env: CallEnv) -> list[dict[str, Any]]:
    query = str(args["query"]).strip()
    if not query:
        raise ToolError("query must not be empty.")
    limit = args.get("limit")
    limit = int(limit) if isinstance(limit, (int, float)) and not isinstance(limit, bool) and limit >= 1 else 5
    include = bool(args.get("includeContent", False))
    s = _settings(env)
    return _SEARCH[s.provider](env, s, query, limit, include)


# -- weather_report --------------------------------------------------------------------------------------


def _desc(entry: Any) -> str | None:
    if isinstance(entry, dict):
        values = entry.get("weatherDesc") or entry.get("lang_en")
        if isinstance(values, list) and values and isinstance(values[0], dict):
            value = str(values[0].get("value", "")).strip()
            return value or None
    return None


def _number(value: Any) -> Any:
    try:
        return int(value)
    except (TypeError, ValueError):
        try:
            return float(value)
        except (TypeError, ValueError):
            return None


def weather_report(args: dict[str, Any], env: CallEnv) -> dict[str, Any]:
    location = str(args["location"]).strip()
    if not location:
        raise ToolError("location must not be empty.")
    s = _settings(env)
    place = "+".join(quote(w, safe="") for w in location.split())
    resp = _request(env, s, "wttr.in", "GET", f"{s.base_url('weather')}/{place}", params={"format": "j1", "lang": "en"})
    if not resp.ok:
        raise ToolError(f"weather_report failed: {resp.status_code}")
    data = _json(resp, "wttr.in")
    days = data.get("weather") if isinstance(data, dict) else None
    today = days[0] if isinstance(days, list) and days and isinstance(days[0], dict) else {}
    noon = next((h for h in today.get("hourly") or [] if isinstance(h, dict) and str(h.get("time")) == "1200"), None)
    current = (data.get("current_condition") or [None])[0] if isinstance(data, dict) else None
    area = (data.get("nearest_area") or [None])[0] if isinstance(data, dict) else None
    city = location
    if isinstance(area, dict) and isinstance(area.get("areaName"), list) and area["areaName"]:
        city = str(area["areaName"][0].get("value") or location)
    return {
        "city": city,
        "date": today.get("date"),
        "weather": _desc(noon) or _desc(current) or "Unknown",
        "temperature": {"unit": "celsius", "max": _number(today.get("maxtempC")), "min": _number(today.get("mintempC"))},
    }
