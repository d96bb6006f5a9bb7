"""How much memory a model needs to load in the built-in engine, and whether it fits.

    needed = memory_needed(path, meta, context_size)   # weights + f16 KV cache + a margin
    check_memory(name, needed, available_memory())      # UserFacingError when it does not fit
"""

from __future__ import annotations

from pathlib import Path

from ..errors import UserFacingError

_MEMORY_MARGIN = 256 * 1024 * 1024  # llama-server's compute buffers and the process itself


def _int(value: object, default: int = 0) -> int:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else default


def available_memory() -> int | None:
    """Bytes of memory free for a new process (Linux: MemAvailable), or None when unknown."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        import psutil  # type: ignore[import-untyped]
    except ImportError:
        return None
    return int(psutil.virtual_memory().available)


def _human(n: float) -> str:
    for unit in ("bytes", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GB"


def memory_needed(path: Path, meta: dict[str, object], context_size: int) -> int:
    """The memory a model needs: its weights, its KV cache for `context_size` tokens (f16)
    and a margin for compute buffers."""
    arch = str(meta.get("general.architecture") or "")
    layers = _int(meta.get(f"{arch}.block_count"))
    heads = _int(meta.get(f"{arch}.attention.head_count"), 1) or 1
    kv_heads = _int(meta.get(f"{arch}.attention.head_count_kv"), heads) or heads
    width = _int(meta.get(f"{arch}.embedding_length"))
    head_dim = _int(meta.get(f"{arch}.attention.key_length")) or (width // heads if width else 128)
    kv = 2 * layers * context_size * kv_heads * head_dim * 2
    return path.stat().st_size + kv + _MEMORY_MARGIN


def check_memory(name: str, needed: int, available: int | None) -> None:
    if available is not None and needed > available:
        raise UserFacingError(
            f"{name} needs about {_human(needed)} of memory to load, but only {_human(available)} is free.",
            hint="Close other programs, choose a smaller model (`llmspace local models`), or lower "
                 "contextSize in settings/local-engine.json.")
