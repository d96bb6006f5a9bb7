"""`settings/search.json`: which web-search provider the web tools use, and its keys.

    {"provider": "firecrawl" | "tavily" | "brave" | "searxng",
     "firecrawlApiKey": "$FIRECRAWL_API_KEY", "tavilyApiKey": "$TAVILY_API_KEY",
     "braveApiKey": "$BRAVE_SEARCH_API_KEY", "searxngUrl": ""}

Keys are literal or `$ENV` (looked up at use; missing -> empty). Optional base-URL
overrides (`firecrawlBaseUrl`, `tavilyBaseUrl`, `braveBaseUrl`, `weatherBaseUrl`) let a
proxy or a test server stand in for the public APIs. Unknown keys are kept on save.
Read by `tools/builtins/web.py`; edited by the Settings › Search page.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from ..errors import UserFacingError
from ..jsonio import SETTINGS_MAX_BYTES, read_json, write_json_atomic
from ..paths import DataRoot

PROVIDERS = ("firecrawl", "tavily", "brave", "searxng")

DEFAULTS: dict[str, Any] = {
    "provider": "firecrawl",
    "firecrawlApiKey": "$FIRECRAWL_API_KEY",
    "tavilyApiKey": "$TAVILY_API_KEY",
    "braveApiKey": "$BRAVE_SEARCH_API_KEY",
    "searxngUrl": "",
}

BASE_URLS: dict[str, str] = {
    "firecrawlBaseUrl": "https://api.firecrawl.dev",
    "tavilyBaseUrl": "https://api.tavily.com",
    "braveBaseUrl": "https://api.search.brave.com",
    "weatherBaseUrl": "https://wttr.in",
}


def resolve_secret(value: Any) -> str:
    """A literal value as is; `$NAME` (or `${NAME}`) from the environment, empty when unset."""
    if not isinstance(value, str):
        return ""
    text = value.strip()
    if text.startswith("${") and text.endswith("}"):
        return os.environ.get(text[2:-1], "")
    if text.startswith("$") and len(text) > 1:
        return os.environ.get(text[1:], "")
    return text


@dataclass
class SearchSettings:
    """The parsed file; `raw` keeps every key (unknown ones included) for saving."""

    raw: dict[str, Any] = field(default_factory=lambda: dict(DEFAULTS))

    @property
    def provider(self) -> str:
        value = self.raw.get("provider", DEFAULTS["provider"])
        return value if isinstance(value, str) and value in PROVIDERS else str(DEFAULTS["provider"])

    def key(self, provider: str) -> str:
        """The resolved API key of `provider` (empty when not configured)."""
        name = f"{provider}ApiKey"
        return resolve_secret(self.raw.get(name, DEFAULTS.get(name, "")))

    @property
    def searxng_url(self) -> str:
        return resolve_secret(self.raw.get("searxngUrl", "")).rstrip("/")

    def base_url(self, name: str) -> str:
        """`firecrawl`, `tavily`, `brave` or `weather`: the configured or public base URL."""
        key = f"{name}BaseUrl"
        value = self.raw.get(key)
        return (value if isinstance(value, str) and value.strip() else BASE_URLS[key]).rstrip("/")

    def secrets(self) -> list[str]:
        return [s for s in (self.key(p) for p in ("firecrawl", "tavily", "brave")) if s]


def settings_path(root: DataRoot) -> Any:
    return root.settings_file("search")


def load_search_settings(root: DataRoot | None, *, create: bool = True) -> SearchSettings:
    """Read `settings/search.json` (created with defaults when missing and `create`)."""
    if root is None:
        return SearchSettings()
    path = settings_path(root)
    if not path.exists():
        settings = SearchSettings()
        if create:
            save_search_settings(root, settings)
        return settings
    data = read_json(path, max_bytes=SETTINGS_MAX_BYTES)
    if not isinstance(data, dict):
        raise UserFacingError(f"{path}: expected a JSON object.", hint="Fix the file in a text editor; it was left unchanged.")
    provider = data.get("provider")
    if provider is not None and provider not in PROVIDERS:
        raise UserFacingError(
            f"{path}: unknown search provider {provider!r}.",
            hint=f"Use one of: {', '.join(PROVIDERS)}.",
        )
    return SearchSettings(raw=dict(data))


def save_search_settings(root: DataRoot, settings: SearchSettings) -> None:
    write_json_atomic(settings_path(root), settings.raw, trailing_newline=True)
