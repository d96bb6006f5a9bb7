"""Write a llama.cpp GGUF (architecture `bert`, mean pooling, F32) from a sentence-transformers
BERT folder: `config.json`, `vocab.txt` (WordPiece) and `model.safetensors` with F32 tensors.

The weights are copied byte for byte (safetensors and GGUF both store little-endian rows; GGUF
lists a tensor's dimensions innermost first, so the shape is reversed); the vocabulary gets
llama.cpp's WordPiece form (`##piece` → `piece`, a word start → `▁word`, the five special
tokens kept and typed CONTROL), as llama.cpp's own Hugging Face converter writes a BertModel.
The pooler and position-id tensors are left out (embeddings do not use them). Standard library
only, so `.ci/test_models.py` can run it before the project is installed.

    python .ci/st_to_gguf.py FOLDER OUT.gguf NAME
"""

from __future__ import annotations

import json
import struct
import sys
from pathlib import Path

ALIGNMENT = 32
U32, I32, F32, BOOL, STRING, ARRAY = 4, 5, 6, 7, 8, 9  # GGUF value types
GGML_F32 = 0
NORMAL, CONTROL = 1, 3  # llama.cpp token types
SPECIAL = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")
EMBEDDINGS = {
    "embeddings.word_embeddings.weight": "token_embd.weight",
    "embeddings.position_embeddings.weight": "position_embd.weight",
    "embeddings.token_type_embeddings.weight": "token_types.weight",
    "embeddings.LayerNorm.weight": "token_embd_norm.weight",
    "embeddings.LayerNorm.bias": "token_embd_norm.bias",
}
LAYER_PARTS = {
    "attention.self.query": "attn_q", "attention.self.key": "attn_k", "attention.self.value": "attn_v",
    "attention.output.dense": "attn_output", "attention.output.LayerNorm": "attn_output_norm",
    "intermediate.dense": "ffn_up", "output.dense": "ffn_down", "output.LayerNorm": "layer_output_norm",
}
SKIPPED = ("embeddings.position_ids", "pooler.dense.weight", "pooler.dense.bias")


def _str(text: str) -> bytes:
    raw = text.encode()
    return struct.pack("<Q", len(raw)) + raw


def _pair(key: str, vtype: int, value: object) -> bytes:
    packed = {U32: lambda v: struct.pack("<I", v), F32: lambda v: struct.pack("<f", v),
              BOOL: lambda v: struct.pack("<?", v), STRING: lambda v: _str(str(v))}[vtype](value)
    return _str(key) + struct.pack("<I", vtype) + packed


def _strings(key: str, items: list[str]) -> bytes:
    return _str(key) + struct.pack("<IIQ", ARRAY, STRING, len(items)) + b"".join(_str(t) for t in items)


def _ints(key: str, items: list[int]) -> bytes:
    return _str(key) + struct.pack("<IIQ", ARRAY, I32, len(items)) + struct.pack(f"<{len(items)}i", *items)


def gguf_name(name: str) -> str | None:
    """The GGUF tensor name of a Hugging Face BERT tensor, None for one the embedding model omits."""
    name = name.removeprefix("bert.")
    if name in EMBEDDINGS:
        return EMBEDDINGS[name]
    if name in SKIPPED:
        return None
    block, _, rest = name.removeprefix("encoder.layer.").partition(".")
    stem, _, kind = rest.rpartition(".")
    if not name.startswith("encoder.layer.") or stem not in LAYER_PARTS:
        raise SystemExit(f"st_to_gguf: unexpected tensor {name!r}: not a BERT model")
    return f"blk.{int(block)}.{LAYER_PARTS[stem]}.{kind}"


def vocabulary(folder: Path) -> tuple[list[str], list[int], dict[str, int]]:
    words = (folder / "vocab.txt").read_text(encoding="utf-8").split("\n")
    if words and words[-1] == "":
        words.pop()
    ids = {w: i for i, w in enumerate(words)}
    missing = [s for s in SPECIAL if s not in ids]
    if missing:
        raise SystemExit(f"st_to_gguf: vocab.txt lacks {missing}")
    tokens = [w if w in SPECIAL else (w[2:] if w.startswith("##") else "\u2581" + w) for w in words]
    return tokens, [CONTROL if w in SPECIAL else NORMAL for w in words], ids


def convert(folder: Path, out: Path, name: str) -> None:
    """Write `out` from the model in `folder` (see the module docstring)."""
    cfg = json.loads((folder / "config.json").read_text())
    if cfg.get("model_type") != "bert":
        raise SystemExit(f"st_to_gguf: {folder} holds a {cfg.get('model_type')!r} model, not bert")
    tokens, types, ids = vocabulary(folder)
    weights = folder / "model.safetensors"
    with weights.open("rb") as f:
        (header_len,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(header_len))
    tensors = []  # (gguf name, dims innermost first, byte offset in the safetensors file, byte count)
    for hf_name, meta in header.items():
        target = None if hf_name == "__metadata__" else gguf_name(hf_name)
        if target is None:
            continue
        if meta["dtype"] != "F32":
            raise SystemExit(f"st_to_gguf: {hf_name} is {meta['dtype']}; only F32 weights are copied")
        start, end = meta["data_offsets"]
        tensors.append((target, list(reversed(meta["shape"])), 8 + header_len + start, end - start))
    pairs = [
        _pair("general.architecture", STRING, "bert"), _pair("general.name", STRING, name),
        _pair("general.file_type", U32, GGML_F32),
        _pair("bert.context_length", U32, cfg["max_position_embeddings"]),
        _pair("bert.embedding_length", U32, cfg["hidden_size"]),
        _pair("bert.feed_forward_length", U32, cfg["intermediate_size"]),
        _pair("bert.block_count", U32, cfg["num_hidden_layers"]),
        _pair("bert.attention.head_count", U32, cfg["num_attention_heads"]),
        _pair("bert.attention.layer_norm_epsilon", F32, cfg["layer_norm_eps"]),
        _pair("bert.attention.causal", BOOL, False),
        _pair("bert.pooling_type", U32, 1),  # mean, as the model's 1_Pooling/config.json says
        _pair("tokenizer.ggml.token_type_count", U32, cfg.get("type_vocab_size", 1)),
        _pair("tokenizer.ggml.model", STRING, "bert"), _pair("tokenizer.ggml.pre", STRING, "bert-bge"),
        _strings("tokenizer.ggml.tokens", tokens), _ints("tokenizer.ggml.token_type", types),
        _pair("tokenizer.ggml.unknown_token_id", U32, ids["[UNK]"]),
        _pair("tokenizer.ggml.seperator_token_id", U32, ids["[SEP]"]),  # sic: llama.cpp's key
        _pair("tokenizer.ggml.padding_token_id", U32, ids["[PAD]"]),
        _pair("tokenizer.ggml.cls_token_id", U32, ids["[CLS]"]),
        _pair("tokenizer.ggml.mask_token_id", U32, ids["[MASK]"]),
    ]
    infos, offset = [], 0
    for target, dims, _, size in tensors:
        infos.append(_str(target) + struct.pack("<I", len(dims)) + struct.pack(f"<{len(dims)}Q", *dims)
                     + struct.pack("<IQ", GGML_F32, offset))
        offset += size + (-size % ALIGNMENT)
    head = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(pairs)) + b"".join(pairs) + b"".join(infos)
    with out.open("wb") as dst, weights.open("rb") as src:
        dst.write(head + bytes(-len(head) % ALIGNMENT))
        for _, _, start, size in tensors:
            src.seek(start)
            dst.write(src.read(size))
            dst.write(bytes(-size % ALIGNMENT))


if __name__ == "__main__":
    if len(sys.argv) != 4:
        raise SystemExit(__doc__.strip().splitlines()[-1])
    convert(Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3])
