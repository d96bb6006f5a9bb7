"""Settings › Search screen logic (no Tk): the fields of `settings/search.json` (the web
search tool's provider, its API keys, the SearXNG URL and the base-URL overrides) as
text, checked field by field, and saved atomically through `settings/search.py`.

    p = SearchPagePresenter(app.root)
    values = p.load()                   # field -> text; raises UserFacingError when unreadable
    errors = p.validate(values)         # field -> message; empty when fine
    p.save(values)                      # re-reads the file: unknown keys are kept

API keys are a literal or `$ENV_NAME`; `key_note` says whether a variable is set (never
its value). An empty base URL means the public service.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlparse

from ..errors import UserFacingError
from ..paths import DataRoot
from ..settings.search import BASE_URLS, DEFAULTS, PROVIDERS, SearchSettings, load_search_settings, save_search_settings


@dataclass(frozen=True)
class Field:
    key: str
    label: str
    kind: str  # "choice", "secret", "url" or "base-url"


LABELS = {"firecrawl": "Firecrawl", "tavily": "Tavily", "brave": "Brave Search", "searxng": "SearXNG"}
FIELDS = (
    Field("provider", "Search provider", "choice"),
    Field("firecrawlApiKey", "Firecrawl API key", "secret"),
    Field("tavilyApiKey", "Tavily API key", "secret"),
    Field("braveApiKey", "Brave Search API key", "secret"),
    Field("searxngUrl", "SearXNG URL", "url"),
    Field("firecrawlBaseUrl", "Firecrawl base URL", "base-url"),
    Field("tavilyBaseUrl", "Tavily base URL", "base-url"),
    Field("braveBaseUrl", "Brave Search base URL", "base-url"),
    Field("weatherBaseUrl", "Weather base URL", "base-url"),
)
KEY_OF = {"firecrawl": "firecrawlApiKey", "tavily": "tavilyApiKey", "brave": "braveApiKey"}
_ENV_RE = re.compile(r"^\$(\{[A-Za-z_][A-Za-z0-9_]*\}|[A-Za-z_][A-Za-z0-9_]*)$")


def env_name(value: str) -> str | None:
    """`NAME` of a `$NAME` / `${NAME}` reference, else None."""
    m = _ENV_RE.match(value.strip())
    return m.group(1).strip("{}") if m else None


class SearchPagePresenter:
    def __init__(self, root: DataRoot) -> None:
        self.root = root
        self.path = root.settings_file("search")

    def _settings(self) -> SearchSettings:
        return load_search_settings(self.root)  # created with defaults when missing

    def load(self) -> dict[str, str]:
        """Every field as text (defaults where the file has none)."""
        raw = self._settings().raw
        out: dict[str, str] = {}
        for f in FIELDS:
            value = raw.get(f.key, DEFAULTS.get(f.key, ""))
            out[f.key] = value if isinstance(value, str) else ("" if value is None else str(value))
        return out

    def validate(self, values: dict[str, str]) -> dict[str, str]:
        errors: dict[str, str] = {}
        provider = values.get("provider", "").strip()
        if provider not in PROVIDERS:
            errors["provider"] = f"Choose one of {', '.join(LABELS[p] for p in PROVIDERS)}."
        for f in FIELDS:
            text = values.get(f.key, "").strip()
            if f.kind == "secret":
                problem = _secret_problem(text)
                if problem is None and not text and KEY_OF.get(provider) == f.key:
                    problem = f"{LABELS[provider]} needs an API key (a key or $ENV_NAME)."
            elif f.kind == "url":
                problem = None if env_name(text) else _url_problem(text)
                if problem is None and not text and provider == "searxng":
                    problem = "SearXNG needs the URL of your instance, for example http://localhost:8080."
            elif f.kind == "base-url":
                problem = _url_problem(text)
            else:
                continue
            if problem:
                errors[f.key] = problem
        return errors

    def changed(self, values: dict[str, str]) -> bool:
        try:
            return {k: v.strip() for k, v in values.items()} != {k: v.strip() for k, v in self.load().items()}
        except UserFacingError:
            return True

    def save(self, values: dict[str, str]) -> None:
        """Check every field, then write the file atomically (keys the form does not show are kept)."""
        errors = self.validate(values)
        if errors:
            first = next(f for f in FIELDS if f.key in errors)
            raise UserFacingError(f"{first.label}: {errors[first.key]} Nothing was saved.")
        settings = self._settings()  # read again: never overwrite a file that became unreadable
        raw: dict[str, Any] = dict(settings.raw)
        for f in FIELDS:
            text = values.get(f.key, "").strip()
            if f.kind == "base-url" and (not text or text.rstrip("/") == BASE_URLS[f.key]):
                raw.pop(f.key, None)  # the public service
            else:
                raw[f.key] = text
        save_search_settings(self.root, SearchSettings(raw=raw))

    @staticmethod
    def key_note(value: str) -> str:
        """What a key field means now: "$NAME is set" / "is not set", a literal, or nothing."""
        text = value.strip()
        name = env_name(text)
        if name:
            return f"${name} is " + ("set" if os.environ.get(name) else "not set")
        return "key saved in search.json" if text else ""

    @staticmethod
    def default_base_url(key: str) -> str:
        return BASE_URLS.get(key, "")


def _secret_problem(text: str) -> str | None:
    if text.startswith("$"):
        return None if env_name(text) else "Write a variable name after $, for example $TAVILY_API_KEY."
    if any(c.isspace() for c in text):
        return "An API key has no spaces or line breaks."
    return None


def _url_problem(text: str) -> str | None:
    if not text:
        return None
    parsed = urlparse(text)
    if parsed.scheme not in ("http", "https") or not parsed.netloc:
        return "Write a URL that starts with http:// or https://."
    if any(c.isspace() for c in text):
        return "A URL has no spaces."
    return None
