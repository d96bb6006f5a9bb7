"""Write a tiny random-weight llama-architecture GGUF model for checking a REAL local server.

Called by `scripts/check_real_local_server.sh` (run it with a venv that has `gguf` and
`numpy`; it is not part of the test suite and not imported by `llmspace`). The model
produces gibberish: the point is to exercise a real OpenAI-compatible server's wire
format (SSE chunks, usage, finish_reason, `/v1/models`) without downloading weights.

Vocabulary: a byte-level SentencePiece ("llama") vocab of `<unk>`, `<s>`, `</s>` and the
256 byte tokens `<0x00>`…`<0xFF>`. Printable ASCII bytes and newline are normal byte tokens;
the other bytes are marked as control tokens so that sampled text stays valid UTF-8
(control tokens detokenize to nothing). A small chat template is stored in
`tokenizer.chat_template` so `/v1/chat/completions` works.

Usage: python make_tiny_gguf.py OUT.gguf [--layers 2] [--embd 64] [--heads 4] [--ctx 2048]
"""

from __future__ import annotations

import argparse

import gguf
import numpy as np

CHAT_TEMPLATE = (
    "{% for m in messages %}<|{{ m['role'] }}|>\n{{ m['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>\n{% endif %}"
)


def vocab() -> tuple[list[bytes], list[float], list[int]]:
    tokens: list[bytes] = [b"<unk>", b"<s>", b"</s>"]
    scores: list[float] = [0.0, 0.0, 0.0]
    types = [gguf.TokenType.UNKNOWN, gguf.TokenType.CONTROL, gguf.TokenType.CONTROL]
    for b in range(256):
        tokens.append(f"<0x{b:02X}>".encode())
        scores.append(0.0)
        printable = 0x20 <= b <= 0x7E or b == 0x0A
        types.append(gguf.TokenType.BYTE if printable else gguf.TokenType.CONTROL)
    return tokens, scores, [int(t) for t in types]


def write(path: str, layers: int, embd: int, heads: int, ctx: int, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    tokens, scores, types = vocab()
    n_vocab, n_ff = len(tokens), embd * 4
    w = gguf.GGUFWriter(path, "llama")
    w.add_name("tiny-random-llama")
    w.add_context_length(ctx)
    w.add_embedding_length(embd)
    w.add_block_count(layers)
    w.add_feed_forward_length(n_ff)
    w.add_head_count(heads)
    w.add_head_count_kv(heads)
    w.add_rope_dimension_count(embd // heads)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_file_type(gguf.LlamaFileType.ALL_F32)
    w.add_tokenizer_model("llama")
    w.add_token_list(tokens)
    w.add_token_scores(scores)
    w.add_token_types(types)
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)
    w.add_unk_token_id(0)
    w.add_add_bos_token(True)
    w.add_add_eos_token(False)
    w.add_chat_template(CHAT_TEMPLATE)

    def t(name: str, *shape: int, ones: bool = False) -> None:
        data = np.ones(shape, np.float32) if ones else (rng.standard_normal(shape) * 0.2).astype(np.float32)
        w.add_tensor(name, data)

    t("token_embd.weight", n_vocab, embd)
    for i in range(layers):
        p = f"blk.{i}."
        t(p + "attn_norm.weight", embd, ones=True)
        t(p + "attn_q.weight", embd, embd)
        t(p + "attn_k.weight", embd, embd)
        t(p + "attn_v.weight", embd, embd)
        t(p + "attn_output.weight", embd, embd)
        t(p + "ffn_norm.weight", embd, ones=True)
        t(p + "ffn_gate.weight", n_ff, embd)
        t(p + "ffn_up.weight", n_ff, embd)
        t(p + "ffn_down.weight", embd, n_ff)
    t("output_norm.weight", embd, ones=True)
    t("output.weight", n_vocab, embd)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--embd", type=int, default=64)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--ctx", type=int, default=2048)
    a = ap.parse_args()
    write(a.out, a.layers, a.embd, a.heads, a.ctx)
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
