"""Where credentials may go: the origin of a URL, and the one rule for following a redirect.

An endpoint's API key and configured headers were given for its origin (scheme, host,
port). A redirect is followed only when it stays on that origin, or is the https upgrade
of it on the same host with the default ports (as `requests` and the `mcp` SDK allow);
any other redirect is refused, whatever the status, with the message
`redirected to another origin http://host:port`.

    same_origin("http://h:1/v1/x", "/v1/y")          -> True  (relative: same origin)
    same_origin("http://h:1/v1/x", "http://h:2/v1")  -> False
    refusal("http://h:2/v1/x?token=…")               -> "redirected to another origin http://h:2"

Applied by `origin_session.py` (`OriginSession`: every provider call, model discovery,
`llmspace models --refresh`, the web built-ins) and `mcp/connection.py` (the httpx client given to the `mcp`
SDK). Standard library only, so any layer may use it.
"""

from __future__ import annotations

from urllib.parse import urljoin, urlsplit

DEFAULT_PORTS = {"http": 80, "https": 443}


def origin(url: str) -> tuple[str, str, int | None]:
    """(scheme, host, port) of `url`, lower-cased, the scheme's default port filled in."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    try:
        port = parts.port
    except ValueError:  # not a number: matches no origin
        return scheme, (parts.hostname or "").lower(), -1
    return scheme, (parts.hostname or "").lower(), port if port is not None else DEFAULT_PORTS.get(scheme)


def same_origin(url: str, target: str) -> bool:
    """Whether `target` (absolute or relative to `url`) is on `url`'s origin, or its https
    upgrade on the same host with default ports."""
    a, b = origin(url), origin(urljoin(url, target))
    if a == b:
        return True
    return a[1] == b[1] and a[0] == "http" and a[2] == 80 and b[0] == "https" and b[2] == 443


def origin_label(url: str) -> str:
    """`scheme://host[:port]` of `url`: no userinfo, path or query (which may carry secrets)."""
    scheme, host, port = origin(url)
    if ":" in host:
        host = f"[{host}]"
    shown = f"{scheme}://{host}" if scheme else host
    return shown if port is None or port == DEFAULT_PORTS.get(scheme) else f"{shown}:{port}"


def refusal(target: str) -> str:
    """The words for a redirect that was not followed."""
    return f"redirected to another origin {origin_label(target)}"
