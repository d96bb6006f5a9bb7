"""`settings/tracing.json`: whether and where runs are exported as OpenTelemetry traces.

    {"enabled": false, "endpoint": "http://127.0.0.1:6006", "protocol": "http/protobuf",
     "captureContent": false, "serviceName": "llmspace", "project": "", "headers": ["Authorization"]}

- `endpoint` is a base URL that gets `/v1/traces` appended (as `OTEL_EXPORTER_OTLP_ENDPOINT`
  does), or a full traces URL ending in `/v1/traces` (Langfuse:
  `https://cloud.langfuse.com/api/public/otel/v1/traces`), used as it is.
- `headers` names the headers sent with every export; their VALUES live in the secret store
  (`llmspace/secrets.py`) under `tracing:header:<Name>` (`header_secret_name`), never in the file.
- `project` (optional) is sent as the resource attribute `openinference.project.name`, which
  picks the Phoenix project (default: the service name).
- The standard variables override the file for one process, as OpenTelemetry's own tools do:
  `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (a full URL) or `OTEL_EXPORTER_OTLP_ENDPOINT` (a base URL),
  `OTEL_EXPORTER_OTLP_HEADERS` / `OTEL_EXPORTER_OTLP_TRACES_HEADERS` (`k=v,k2=v2`, values
  URL-encoded) and `OTEL_SERVICE_NAME`. They never turn tracing on by themselves.

Read with `load_tracing(settings_dir)` and `export_target`, written with `save_tracing`; no network
(`traces/otel_start.py` starts the exporter they describe).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from ..errors import UserFacingError
from ..jsonio import SETTINGS_MAX_BYTES, read_json, write_json_atomic
from ..redact import KNOWN, secret_values
from ..secrets import SecretStore

FILE_NAME = "tracing.json"
PROTOCOL = "http/protobuf"
TRACES_PATH = "/v1/traces"


def header_secret_name(header: str) -> str:
    return f"tracing:header:{header.strip().lower()}"


@dataclass
class TracingSettings:
    """The file's fields (see the module docstring)."""

    enabled: bool = False
    endpoint: str = "http://127.0.0.1:6006"
    protocol: str = PROTOCOL
    captureContent: bool = False
    serviceName: str = "llmspace"
    project: str = ""
    headers: list[str] = field(default_factory=list)


@dataclass
class ExportTarget:
    """Where spans go for this process: the traces URL, the headers (values resolved), the
    service name and the Phoenix project."""

    url: str
    headers: dict[str, str]
    service_name: str
    project: str
    capture: bool


def traces_url(endpoint: str) -> str:
    """A base URL with `/v1/traces` appended, or a full traces URL as it is."""
    endpoint = endpoint.strip()
    if not endpoint.startswith(("http://", "https://")):
        raise UserFacingError(f"The tracing endpoint {endpoint!r} is not an http(s) URL. "
                              "Set it in Settings › Tracing, e.g. http://127.0.0.1:6006 for Phoenix.")
    if endpoint.rstrip("/").endswith(TRACES_PATH):
        return endpoint
    return endpoint.rstrip("/") + TRACES_PATH


def parse_env_headers(text: str) -> dict[str, str]:
    """`k=v,k2=v2` (values URL-encoded), as `OTEL_EXPORTER_OTLP_HEADERS` writes them."""
    out: dict[str, str] = {}
    for item in text.split(","):
        name, sep, value = item.partition("=")
        if sep and name.strip():
            out[name.strip()] = unquote(value.strip())
    return out


def load_tracing(settings_dir: Path) -> TracingSettings:
    path = settings_dir / FILE_NAME
    if not path.exists():
        return TracingSettings()
    data: Any = read_json(path, max_bytes=SETTINGS_MAX_BYTES)
    if not isinstance(data, dict):
        raise UserFacingError(f"{path} is not a JSON object. Fix or delete it (Settings › Tracing rewrites it).")
    known = {k: data[k] for k in asdict(TracingSettings()) if k in data}
    settings = TracingSettings(**known)
    if settings.protocol != PROTOCOL:
        raise UserFacingError(f"{path}: protocol {settings.protocol!r} is not supported; use \"{PROTOCOL}\".")
    return settings


def save_tracing(settings_dir: Path, settings: TracingSettings) -> None:
    write_json_atomic(settings_dir / FILE_NAME, asdict(settings), trailing_newline=True)


def export_target(settings: TracingSettings, secrets: SecretStore | None, env: Mapping[str, str] | None = None,
                  endpoint: str | None = None) -> ExportTarget:
    """The target of `settings` with the environment's overrides (`endpoint`: a command's
    `--endpoint`, which wins over both)."""
    env = os.environ if env is None else env
    headers: dict[str, str] = {}
    for name in settings.headers:
        value = secrets.get(header_secret_name(name)) if secrets is not None else None
        if value:
            headers[name] = value
    if endpoint:
        url = traces_url(endpoint)
    elif env.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"):
        url = env["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"].strip()
    elif env.get("OTEL_EXPORTER_OTLP_ENDPOINT"):
        url = traces_url(env["OTEL_EXPORTER_OTLP_ENDPOINT"])
    else:
        url = traces_url(settings.endpoint)
    for var in ("OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS"):
        headers.update(parse_env_headers(env.get(var, "")))
    KNOWN.add(secret_values(None, headers, url))  # never in a log line or a message
    service = env.get("OTEL_SERVICE_NAME", "").strip() or settings.serviceName or "llmspace"
    return ExportTarget(url=url, headers=headers, service_name=service, project=settings.project or service,
                        capture=settings.captureContent)

