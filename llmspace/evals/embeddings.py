"""`similar` assertions of evaluations: the cosine similarity of the output's embedding and the
value's, from any OpenAI-compatible `POST {baseUrl}/embeddings` provider (OpenAI, the
built-in engine serving an embedding GGUF, Ollama's or vLLM's `/v1`, …).

    embedder = Embedder("openai/text-embedding-3-small", endpoint, "text-embedding-3-small")
    check = embedder.check(assertion, observation)     # a Check; a failed call is a failed check

promptfoo's rules: the value is a text or a list of texts (the output must be similar to one
of them); it passes when the similarity reaches the threshold (default 0.75); `not-similar`
passes below it; the check's score is the best similarity. Vectors are kept per text for the
run (an evaluation compares many outputs with few references). A call that fails (HTTP error,
no answer, vectors that do not match) fails the check with the provider's message, secrets
removed. `resolve_embedder(registry, provider, model)` finds the endpoint and refuses one whose
API has no embeddings route (`check_embedder`); an API that declares how it embeds
(`ModelApi.embeddings`: the built-in engine, `--embedder local/NAME`) is reached through that
for each request (the engine is started on the first). `evaluation_embedder(registry, default,
plan)` is the evaluation's embedder holding the similar assertions' own (promptfoo's `provider`,
or the `embedding` of its per-kind map); `check` uses an assertion's own when it has one.
"""

from __future__ import annotations

import contextlib
import math
import threading
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

from ..agent.services import redactor_for
from ..errors import UserFacingError
from ..providers.base import Endpoint
from .assertions import Assertion, Check, Observation

if TYPE_CHECKING:
    from ..providers.registry import ProviderRegistry
    from .plan import Plan

DEFAULT_THRESHOLD = 0.75
BATCH = 64  # texts per request
EMBEDDING_APIS = ("openai-completions", "openai-responses")


class EmbeddingError(Exception):
    """The embeddings call failed (the message says why, secrets removed)."""


def check_embedder(label: str, api: str) -> None:
    """Refuse an embedder whose provider does not speak the OpenAI API (Anthropic has no embeddings)."""
    if api not in EMBEDDING_APIS:
        raise UserFacingError(f"The embedder {label} speaks {api}, which has no /embeddings route.",
                              hint="Name an OpenAI-compatible provider's embedding model with --embedder PROVIDER/MODEL "
                                   "(e.g. openai/text-embedding-3-small), or an embedding GGUF on the built-in engine: local/NAME.")


def resolve_embedder(registry: ProviderRegistry, provider: str, model: str) -> Embedder:
    """The embedder PROVIDER/MODEL through the provider registry (unknown providers and missing
    keys are refused now, as for the evaluated models)."""
    endpoint, info = registry.resolve(None, provider, model)
    label = f"{provider}/{model}"
    reach = registry.model_api(endpoint.api).embeddings
    if reach is None:
        check_embedder(label, endpoint.api)
    return Embedder(label, endpoint, info.id, reach=reach)


def evaluation_embedder(registry: ProviderRegistry, default: tuple[str, str] | None, plan: Plan) -> Embedder | None:
    """The evaluation's embedder, holding the similar assertions' own embedders (`plan.embedders`)
    that `registry` can call; one it cannot is left out with a note (the evaluation's embeds
    for it), or refused naming it when the evaluation has none."""
    base = resolve_embedder(registry, *default) if default is not None else None
    own: dict[str, Embedder] = {}
    for provider, model in plan.embedders:
        try:
            own[f"{provider}/{model}"] = resolve_embedder(registry, provider, model)
        except UserFacingError:
            if base is None:
                raise UserFacingError(f"A similar assertion's `provider` names the embedder {provider}/{model}, which is not "
                                      "a configured embedding model, and the evaluation has no embedder; nothing was run.",
                                      hint="Configure that provider, or add `embedder: PROVIDER/MODEL` (or --embedder).") from None
            plan.notes.append(f"an embedding `provider` names {provider}/{model}, which is not a configured embedding model: "
                              f"the evaluation's embedder ({base.label}) checks its similar assertions")
    if base is None and own:
        base = next(iter(own.values()))
    if base is not None:
        base.own = own
    return base


def cosine(a: list[float], b: list[float]) -> float:
    """The cosine similarity of two vectors (0 when either is all zeros)."""
    if len(a) != len(b):
        raise EmbeddingError(f"the provider returned vectors of different lengths ({len(a)} and {len(b)})")
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norm if norm > 0 else 0.0


def references(a: Assertion) -> list[str]:
    value = a.value
    return [str(v) for v in value] if isinstance(value, list) else [str(value)]


class Embedder:
    """One embedding model of an evaluation, its vectors kept per text."""

    def __init__(self, label: str, endpoint: Endpoint, model: str, *,
                 reach: Callable[[Endpoint, str], AbstractContextManager[Endpoint]] | None = None) -> None:
        self.label, self.endpoint, self.model = label, endpoint, model
        self._reach = reach  # None: post to `endpoint` itself
        self._vectors: dict[str, list[float]] = {}
        self._lock = threading.Lock()
        self.calls = 0
        self._redactor = redactor_for(endpoint)
        self.own: dict[str, Embedder] = {}  # "provider/model" -> a similar assertion's own embedder

    def vectors(self, texts: list[str]) -> list[list[float]]:
        with self._lock:
            missing = list(dict.fromkeys(t for t in texts if t not in self._vectors))
        for start in range(0, len(missing), BATCH):
            batch = missing[start:start + BATCH]
            got = self._request(batch)
            with self._lock:
                self._vectors.update(zip(batch, got, strict=True))
        with self._lock:
            return [self._vectors[t] for t in texts]

    def _request(self, texts: list[str]) -> list[list[float]]:
        import requests

        from ..providers.http import api_url, new_session, provider_message

        self.calls += 1
        try:
            reached = self._reach(self.endpoint, self.model) if self._reach else contextlib.nullcontext(self.endpoint)
            with reached as ep, new_session() as session:
                headers = {"Authorization": f"Bearer {ep.api_key}"} if ep.api_key else {}
                headers.update(ep.headers)
                url = api_url(ep.base_url, "/embeddings")
                resp = session.post(url, json={"model": self.model, "input": texts}, headers=headers,
                                    timeout=(ep.connect_timeout, ep.read_timeout))
                body = resp.content
        except requests.RequestException as exc:
            raise EmbeddingError(self._redactor.text(f"{self.label}: the embeddings call failed ({type(exc).__name__}: {exc})")) from None
        except UserFacingError as exc:  # the engine could not serve the model
            raise EmbeddingError(self._redactor.text(f"{self.label}: {exc.message}")) from None
        if resp.status_code != 200:
            raise EmbeddingError(self._redactor.text(f"{self.label}: the embeddings call answered HTTP {resp.status_code}: "
                                                     f"{provider_message(body)}"))
        return self._read(body, len(texts))

    def _read(self, body: bytes, count: int) -> list[list[float]]:
        import json

        try:
            data: Any = json.loads(body)
            items = sorted(data["data"], key=lambda d: int(d.get("index", 0)))
            vectors = [[float(x) for x in item["embedding"]] for item in items]
        except (ValueError, KeyError, TypeError, AttributeError):
            raise EmbeddingError(f"{self.label}: the embeddings answer is not OpenAI's format ({{data: [{{embedding}}]}})") from None
        if len(vectors) != count:
            raise EmbeddingError(f"{self.label}: asked for {count} embeddings, got {len(vectors)}")
        return vectors

    def similarity(self, output: str, refs: list[str]) -> list[float]:
        first, *others = self.vectors([output, *refs])
        return [cosine(first, other) for other in others]

    def check(self, a: Assertion, obs: Observation) -> Check:
        chosen = self.own.get(a.embedder or "", self)
        if chosen is not self:
            return chosen.check(a, obs)
        threshold = a.threshold if a.threshold is not None else DEFAULT_THRESHOLD
        refs = references(a)
        try:
            scores = self.similarity(obs.output, refs)
        except EmbeddingError as exc:
            return Check(a.label, False, a.weight, str(exc))
        best = max(scores)
        passed = best >= threshold - 1e-12
        if a.negate:
            reason = "" if not passed else f"similarity {best:.3f} ≥ {threshold:g} (expected below)"
            return Check(a.label, not passed, a.weight, reason, round(best, 4))
        reason = "" if passed else f"similarity {best:.3f} < {threshold:g}"
        return Check(a.label, passed, a.weight, reason, round(best, 4))
