"""Model providers: one adapter per model API turns a provider-neutral request into HTTP and
streams back a small closed set of events. Threading, retries of a whole run, persistence and
tool round-trips live in `agent/`, not here. Nothing runs on import.

Modules:
- `base.py`                the adapter contract (`Adapter`, `ModelRequest`, `Endpoint`, `ModelInfo`)
- `events.py`              the `StreamEvent` set an adapter yields
- `openai_completions.py`  OpenAI Chat Completions and the servers that copy it (Ollama, vLLM, …)
- `openai_responses.py`    OpenAI Responses
- `anthropic_messages.py`  Anthropic Messages
- `replay.py`              the offline `replay` provider (answers from a recorded run)
- `registry.py`            model APIs and providers, and model resolution to an `Endpoint`
- `discovery.py`           which models a local server offers right now
- `http.py`                one cancellable POST, error bodies, JSON helpers
- `sse.py`                 incremental Server-Sent Events parsing
- `think.py`               `<think>` tag splitting
- `retry.py`               retries before the first token (used by `agent/`)
- `traces.py`              one trace file per model call and tool call of a run under `traces/calls/`
- `usage.py`               usage and cost of a turn
"""
