"""The Hugging Face datasets server's rows as promptfoo tests (`huggingface://datasets/OWNER/NAME?split=…&config=…&limit=…`),
and what every remote test source shares: the size caps, the URL as messages show it and the
errors of a failed call.

    tests = fetch_huggingface("huggingface://datasets/cais/hle?split=test&limit=50", "promptfooconfig.yaml")

As promptfoo fetches it: `GET /rows?dataset=OWNER/NAME&split=…&config=…&offset=…&length=…` on the
datasets server (`https://datasets-server.huggingface.co`, or `HF_DATASETS_SERVER`), split `test`
and config `default` unless the URL gives them, its other query parameters passed on; pages of 100
rows until `limit` or the dataset's `num_rows_total`. `HF_TOKEN` (else `HF_API_TOKEN`,
`HUGGING_FACE_HUB_TOKEN`) goes as a bearer token; with `HF_HUB_OFFLINE=1` nothing is fetched. A
row's fields are the test's `vars`. A source is capped at `MAX_ROWS` tests and `MAX_BYTES` of tests.
"""

from __future__ import annotations

import os
from typing import Any
from urllib.parse import parse_qsl, quote

import orjson

from ..errors import UserFacingError
from ..redact import KNOWN
from ..traces.remote import JsonClient, RemoteError

HF_PREFIX = "huggingface://datasets/"
LANGFUSE_PREFIX = "langfuse://traces"
HF_SERVER = "https://datasets-server.huggingface.co"
HF_PAGE = 100  # the datasets server's most rows per request
MAX_ROWS = 50_000
MAX_BYTES = 128 * 1024 * 1024
PAGE_MAX_BYTES = 32 * 1024 * 1024


def redacted(spec: str) -> str:
    """The URL for messages: a Langfuse query may hold user and session ids, so it is left out (as promptfoo does)."""
    if spec.startswith(LANGFUSE_PREFIX) and "?" in spec:
        return LANGFUSE_PREFIX + "?…"
    return spec


class Budget:
    """Counts a source's tests against `MAX_ROWS` and `MAX_BYTES`; over either, the source is refused."""

    def __init__(self, label: str, hint: str) -> None:
        self.label, self.hint = label, hint
        self.rows = 0
        self.bytes = 0

    def add(self, tests: list[dict[str, Any]]) -> None:
        self.rows += len(tests)
        self.bytes += sum(len(orjson.dumps(t, default=str)) for t in tests)
        if self.rows > MAX_ROWS or self.bytes > MAX_BYTES:
            raise UserFacingError(f"{self.label} holds more than {MAX_ROWS:,} tests or {MAX_BYTES // (1024 * 1024)} MB; "
                                  "nothing was kept or run.", hint=self.hint)


def remote_failure(exc: RemoteError, label: str, messages: dict[int, tuple[str, str]],
                   offline_hint: str) -> UserFacingError:
    """A failed call as the user should read it: `messages` by HTTP status, else offline or a bad answer."""
    if exc.status in messages:
        text, hint = messages[exc.status]
        return UserFacingError(f"{text} (HTTP {exc.status}); nothing was run.", hint=hint)
    if exc.what == "network" and exc.status is None:
        return UserFacingError(f"Could not fetch {label}: {exc} There is no snapshot of it yet, so nothing was run.",
                               hint=offline_hint)
    return UserFacingError(f"Could not fetch {label}: {exc} Nothing was run.", hint=exc.hint or offline_hint)

# -- Hugging Face ----------------------------------------------------------------------------


def hf_token() -> str:
    for name in ("HF_TOKEN", "HF_API_TOKEN", "HUGGING_FACE_HUB_TOKEN"):
        value = os.environ.get(name, "").strip()
        if value:
            return value
    return ""


def parse_huggingface(spec: str, config_name: str) -> tuple[str, dict[str, str], int | None]:
    """(OWNER/NAME, query parameters with promptfoo's defaults, the row limit or None)."""
    path, _, query = spec[len(HF_PREFIX):].partition("?")
    parts = path.strip("/").split("/")
    if len(parts) != 2 or not all(parts):
        raise UserFacingError(f"{config_name}: {spec!r} does not name a dataset as huggingface://datasets/OWNER/NAME.")
    params = {"split": "test", "config": "default", **dict(parse_qsl(query, keep_blank_values=True))}
    limit: int | None = None
    if params.get("limit"):
        try:
            limit = int(params["limit"])
        except ValueError:
            limit = 0
        if limit < 1:
            raise UserFacingError(f"{config_name}: the limit of {spec!r} is not a positive whole number.")
    return "/".join(parts), params, limit


def fetch_huggingface(spec: str, config_name: str) -> list[dict[str, Any]]:
    dataset, params, limit = parse_huggingface(spec, config_name)
    if os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on"):
        raise UserFacingError(f"{spec} has no snapshot yet and HF_HUB_OFFLINE is set, so it was not fetched; nothing was run.",
                              hint="Unset HF_HUB_OFFLINE for one `eval new` (the tests are then kept and later runs are offline).")
    base = os.environ.get("HF_DATASETS_SERVER", "").strip().rstrip("/") or HF_SERVER
    token = hf_token()
    headers = {}
    if token:
        KNOWN.add([token])
        headers["Authorization"] = f"Bearer {token}"
    page = f"https://huggingface.co/datasets/{quote(dataset)}"
    messages = {
        401: ((f"Hugging Face did not give the dataset {dataset} without a valid token: it is private or gated, "
              "or the token is wrong"), (f"Set HF_TOKEN to a read token of an account that may read it (accept its terms "
                                       f"on {page}), then run again.")),
        403: (f"Hugging Face refused the dataset {dataset} to this token", (f"Accept the dataset's terms on {page} with "
                                                                            "the token's account, or use another token.")),
        404: (f"Hugging Face has no dataset {dataset} with the split {params['split']!r} and config {params['config']!r}",
              "Check the dataset's name and its split and config (`?split=…&config=…`) on its page."),
    }
    budget = Budget(spec, "Add a smaller `limit=` to the URL, or pick a split.")
    client = JsonClient(base, "Hugging Face datasets server", headers, max_bytes=PAGE_MAX_BYTES)
    tests: list[dict[str, Any]] = []
    try:
        while limit is None or len(tests) < limit:
            length = HF_PAGE if limit is None else min(HF_PAGE, limit - len(tests))
            answer = _get(client, {"dataset": dataset, **params, "offset": len(tests), "length": length}, messages, spec)
            rows, total = _hf_rows(answer, spec)
            budget.add(rows)
            tests.extend(rows)
            if len(rows) < length or (isinstance(total, int) and len(tests) >= total):
                break
    finally:
        client.close()
    return tests[:limit] if limit else tests


def _get(client: JsonClient, params: dict[str, Any], messages: dict[int, tuple[str, str]], spec: str) -> Any:
    try:
        return client.get("/rows", params)
    except RemoteError as exc:
        raise remote_failure(exc, spec, messages, "Connect to the network and run again (the tests are then kept, "
                                                  "and later runs are offline), or set HF_DATASETS_SERVER to a mirror.") from None


def _hf_rows(answer: Any, spec: str) -> tuple[list[dict[str, Any]], Any]:
    """The page's rows as tests (a row's fields are the vars) and the dataset's row count."""
    rows = answer.get("rows") if isinstance(answer, dict) else None
    if not isinstance(rows, list) or not all(isinstance(r, dict) and isinstance(r.get("row"), dict) for r in rows):
        raise UserFacingError(f"The datasets server's answer for {spec} is not a page of rows "
                              "(`rows: [{row: {…}}]`); nothing was run.",
                              hint="Check HF_DATASETS_SERVER: it must be the datasets server or a mirror of its /rows.")
    return [{"vars": dict(r["row"])} for r in rows], answer.get("num_rows_total")
