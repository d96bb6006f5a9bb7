"""Secrets removed by value from everything the app writes or prints: API keys and auth
headers never appear in messages, logs or traces.

A secret is every configured API key (4 characters or more, whatever its shape) and the
value of every configured HTTP header of 8 characters or more, whatever the header's name,
except the plain `Content-Type`, `Accept` and `User-Agent`. Of a header value, the parts
a server may echo on their own count too: each word (`Bearer <token>` → `<token>`) and each
`name=value` value (`Cookie: a=<value>; b=…`), when 8 characters or more, and of a
`Basic` credential its decoded `user:password` and password. Matching ignores case (a server
may echo a header upper-cased). Of an endpoint's
URL, the userinfo password, the `user:password` pair and its Basic encoding, and its query
values (`url_secrets`); the URL itself is shown and written as `mask_url` gives it.

    r = Redactor(secret_values(endpoint.api_key, endpoint.headers))
    r.text("HTTP 401: bad key abc…")   # every secret (also JSON-escaped) → "***"
    r.value({"headers": {...}})         # the same, on every string in nested dicts/lists

`KNOWN` is the process-wide set: `providers/http.py` and `agent/services.py` add each
request's secrets, `app.py` adds the configured providers' keys and headers
(`configured_secrets`); `errors.redact`, the log file's formatter
(`RedactingFormatter`, attached by `app.py`) and the CLI's error printing apply it. Texts
the user wrote (thread messages) are never passed through here. No imports from the rest
of the app, so any layer may use it.
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
import os
import re
import threading
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import unquote, unquote_plus, urlsplit, urlunsplit

MASK = "***"
MIN_KEY = 4
MIN_HEADER_VALUE = 8
PLAIN_HEADERS = frozenset({"content-type", "accept", "user-agent"})
SENSITIVE_NAME = re.compile(r"(?i)key|auth|token|secret|cookie|session|passw|sig|credential")

# Shapes that are secrets wherever they come from (a key the app was never told about).
_SHAPES = (
    (re.compile(r"\bsk-[A-Za-z0-9_\-]{8,}"), "sk-***"),
    (re.compile(r"(?i)\b(bearer\s+)[^\s\"',]{8,}"), r"\1***"),
)
_PARTS = re.compile(r"[\s;,]+")


def secret_values(api_key: str | None, headers: Mapping[str, str] | None = None, url: str | None = None) -> set[str]:
    """The secrets of one endpoint: its API key, its configured header values and the secrets
    in its URL (`url_secrets`)."""
    out: set[str] = url_secrets(url)
    key = (api_key or "").strip()
    if len(key) >= MIN_KEY:
        out.add(key)
    for name, value in (headers or {}).items():
        if not isinstance(value, str) or str(name).strip().lower() in PLAIN_HEADERS:
            continue
        value = value.strip()
        out |= basic_secrets(value)
        if len(value) < MIN_HEADER_VALUE:
            continue
        out.add(value)
        for part in _PARTS.split(value):
            if len(part) >= MIN_HEADER_VALUE:
                out.add(part)
            _, eq, rest = part.partition("=")
            rest = rest.strip("\"'")
            if eq and len(rest) >= MIN_HEADER_VALUE:
                out.add(rest)
    return out


def mask_url(url: str) -> str:
    """`url` as the app shows or writes it: the userinfo password (or a userinfo that is only a
    token), every query value and the fragment replaced by `***`; scheme, host, port, path and
    query names kept. `http://u:pw@h/v1?token=t&x=1` -> `http://u:***@h/v1?token=***&x=***`."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return url
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, _, hostport = netloc.rpartition("@")
        user, colon, _ = userinfo.partition(":")
        netloc = f"{user}:{MASK}@{hostport}" if colon else f"{MASK}@{hostport}"
    query = "&".join(_mask_param(p) for p in parts.query.split("&")) if parts.query else ""
    return urlunsplit((parts.scheme, netloc, parts.path, query, MASK if parts.fragment else ""))


def _mask_param(param: str) -> str:
    name, eq, value = param.partition("=")
    if eq:
        return f"{name}={MASK}" if value else param
    return MASK if name else param


def url_secrets(url: str | None) -> set[str]:
    """The secrets a URL carries: its userinfo password (or a token-only userinfo), the
    `user:password` pair and the Basic credential `requests` sends for it, and every query
    value of `MIN_HEADER_VALUE` characters or more, or `MIN_KEY` when its name looks like a
    credential (`token`, `key`, …), as written and decoded."""
    out: set[str] = set()
    if not url:
        return out
    try:
        parts = urlsplit(url)
    except ValueError:
        return out
    if "@" in parts.netloc:
        userinfo = parts.netloc.rpartition("@")[0]
        user, colon, password = userinfo.partition(":")
        if colon:
            out |= _basic_pair(unquote(user), unquote(password))
            out |= {password, unquote(password)}
        else:
            out |= {userinfo, unquote(userinfo)}
    for param in parts.query.split("&") if parts.query else ():
        name, eq, value = param.partition("=")
        value = value if eq else name
        shortest = MIN_KEY if eq and SENSITIVE_NAME.search(name) else MIN_HEADER_VALUE
        out |= {v for v in (value, unquote_plus(value)) if len(v) >= shortest}
    return {v for v in out if len(v) >= MIN_KEY}


_BASIC = re.compile(r"(?i)^basic\s+([A-Za-z0-9+/=_-]+)$")


def basic_secrets(value: str) -> set[str]:
    """Of an `Authorization: Basic …` value, the decoded `user:password` and the password (a
    server may echo either); nothing for any other value."""
    m = _BASIC.match(value.strip())
    if m is None:
        return set()
    token = m.group(1).replace("-", "+").replace("_", "/").rstrip("=")
    try:
        raw = base64.b64decode(token + "=" * (-len(token) % 4))
    except (ValueError, binascii.Error):
        return set()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        text = raw.decode("latin-1")
    user, colon, password = text.partition(":")
    return _basic_pair(user, password) if colon else set()


def _basic_pair(user: str, password: str) -> set[str]:
    """`user:password`, its Basic encoding and the password, when the password is a secret."""
    if len(password) < MIN_KEY:
        return set()
    pair = f"{user}:{password}"
    out = {pair, password}
    for encoding in ("latin-1", "utf-8"):
        try:
            out.add(base64.b64encode(pair.encode(encoding)).decode("ascii"))
        except UnicodeEncodeError:
            continue
    return out


def _variants(value: str) -> set[str]:
    """The value as written, and as it appears inside JSON text (escaped)."""
    escaped = json.dumps(value)[1:-1]
    ascii_escaped = json.dumps(value, ensure_ascii=True)[1:-1]
    return {value, escaped, ascii_escaped}


class Redactor:
    """Replaces a fixed set of secret values (longest first) and key-shaped text with `***`."""

    def __init__(self, values: Iterable[str] = ()) -> None:
        self._values: frozenset[str] = frozenset(v for v in values if isinstance(v, str) and len(v) >= MIN_KEY)
        self._pattern = self._compile(self._values)

    @staticmethod
    def _compile(values: Iterable[str]) -> re.Pattern[str] | None:
        every = {x for v in values for x in _variants(v)}
        if not every:
            return None
        # case-insensitive: a server may echo a header or key upper-cased
        return re.compile("|".join(re.escape(v) for v in sorted(every, key=len, reverse=True)), re.IGNORECASE)

    @property
    def values(self) -> frozenset[str]:
        return self._values

    def __add__(self, other: Redactor) -> Redactor:
        return Redactor(self._values | other.values)

    def text(self, text: str) -> str:
        if self._pattern is not None:
            text = self._pattern.sub(MASK, text)
        for pattern, repl in _SHAPES:
            text = pattern.sub(repl, text)
        return text

    def value(self, value: Any) -> Any:
        """`value` with every string in it (dict keys included) redacted."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self.value(k): self.value(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self.value(v) for v in value]
        return value


class SecretRegistry:
    """The secrets this process knows of (thread-safe; only grows)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._redactor = Redactor()

    def add(self, values: Iterable[str]) -> None:
        new = {v for v in values if isinstance(v, str) and len(v) >= MIN_KEY}
        if new <= self._redactor.values:
            return
        with self._lock:
            self._redactor = Redactor(self._redactor.values | new)

    @property
    def redactor(self) -> Redactor:
        return self._redactor

    def text(self, text: str) -> str:
        return self._redactor.text(text)


KNOWN = SecretRegistry()


def configured_secrets(models: Any) -> set[str]:
    """The keys and header values of every provider in the model settings (`settings/models.py`):
    literal keys, `$ENV` keys and the providers' own env vars (the OS keyring is not asked here;
    a key from it is added when a request uses it)."""
    out: set[str] = set()
    try:
        views = list(models.providers())
    except Exception:  # settings that cannot be read have no secrets to add
        return out
    for view in views:
        setting = getattr(view, "api_key_setting", None) or ""
        keys = [os.environ.get(setting[1:], "") if setting.startswith("$") else setting]
        env_var = getattr(view, "env_var", None)
        if env_var:
            keys.append(os.environ.get(env_var, ""))
        for key in keys:
            out |= secret_values(key, getattr(view, "headers", None), getattr(view, "base_url", None))
    return out


def redact_known(text: str, extra: Iterable[str] = ()) -> str:
    """`text` without the process's known secrets nor `extra` ones."""
    r = KNOWN.redactor
    extra = [e for e in extra if e]
    if extra:
        r = r + Redactor(extra)
    return r.text(text)


class RedactingFormatter(logging.Formatter):
    """A log formatter whose output (message, arguments, tracebacks) has every known secret removed."""

    def format(self, record: logging.LogRecord) -> str:
        return KNOWN.text(super().format(record))
