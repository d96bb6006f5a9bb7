"""LocalModels: GGUF files added in place or copied, resolved before use, removed safely."""

from __future__ import annotations

import hashlib
import os
import struct
from pathlib import Path

import pytest

from llmspace.errors import NameConflict, UserFacingError
from llmspace.jsonio import read_json
from llmspace.local import catalog
from llmspace.local.gguf_meta import read_metadata
from llmspace.local.models import INDEX_NAME, LocalModels, default_name, is_gguf
from llmspace.paths import DataRoot
from tests.local.gguf import gguf_bytes, gguf_string, write_gguf


@pytest.fixture
def models(home: Path) -> LocalModels:
    return LocalModels(DataRoot(home))


def test_a_gguf_added_in_place_is_listed_resolved_and_recorded_in_the_index(models: LocalModels, tmp_path: Path) -> None:
    src = write_gguf(tmp_path / "elsewhere" / "Tiny-Model.Q4_K_M.gguf", padding=5000)
    added = models.add(src)
    assert added.name == "tiny-model.q4_k_m"
    assert added.origin == "in-place" and added.path == src and added.size == src.stat().st_size
    assert added.sha256 == hashlib.sha256(src.read_bytes()).hexdigest()
    assert [m.name for m in models.installed()] == ["tiny-model.q4_k_m"]
    assert models.resolve("Tiny-Model.Q4_K_M") == added
    index = read_json(models.folder / INDEX_NAME)
    assert index["models"][0]["origin"] == "in-place" and index["models"][0]["path"] == str(src)


def test_a_file_without_the_gguf_magic_is_refused_and_nothing_is_recorded(models: LocalModels, tmp_path: Path) -> None:
    bad = tmp_path / "model.gguf"
    bad.write_bytes(b"PK\x03\x04" + bytes(100))
    with pytest.raises(UserFacingError, match="not a GGUF model file"):
        models.add(bad)
    assert models.installed() == []
    assert not is_gguf(bad)
    old_version = tmp_path / "v1.gguf"
    old_version.write_bytes(b"GGUF" + (1).to_bytes(4, "little") + bytes(16))
    assert not is_gguf(old_version)
    assert is_gguf(write_gguf(tmp_path / "ok.gguf"))


def test_a_copy_is_ours_and_remove_deletes_it_but_never_a_file_added_in_place(models: LocalModels, tmp_path: Path) -> None:
    src = write_gguf(tmp_path / "m.gguf", padding=3000)
    copied = models.add(src, name="mine", copy=True)
    in_place = models.add(src, name="theirs")
    assert copied.origin == "copied" and copied.path.parent == models.folder / "copied"
    assert copied.path.read_bytes() == src.read_bytes()

    removed, deleted = models.remove("mine")
    assert removed == copied and deleted == [copied.path] and not copied.path.exists()
    removed, deleted = models.remove("theirs")
    assert removed == in_place and deleted == [] and src.exists()
    assert models.installed() == []


def test_a_name_already_used_or_a_file_already_added_is_a_conflict(models: LocalModels, tmp_path: Path) -> None:
    src = write_gguf(tmp_path / "a.gguf")
    models.add(src, name="one")
    with pytest.raises(NameConflict, match="already added as 'one'"):
        models.add(src, name="two")
    other = write_gguf(tmp_path / "b.gguf", architecture="qwen2")
    with pytest.raises(NameConflict, match="already installed"):
        models.add(other, name="ONE")
    with pytest.raises(UserFacingError, match="cannot be a model name"):
        models.add(other, name="../up")


def test_resolving_an_unknown_name_says_how_to_get_it(models: LocalModels) -> None:
    with pytest.raises(UserFacingError) as caught:
        models.resolve("nothing-here")
    assert "llmspace local pull NAME" in str(caught.value) and "llmspace local add PATH" in str(caught.value)
    with pytest.raises(UserFacingError, match=r"local pull qwen2.5-coder-0.5b"):
        models.resolve("qwen2.5-coder-0.5b")


def test_a_file_changed_after_it_was_added_is_not_used(models: LocalModels, tmp_path: Path) -> None:
    src = write_gguf(tmp_path / "m.gguf", padding=100)
    added = models.add(src)
    src.write_bytes(gguf_bytes("qwen2", padding=100))  # same size, other bytes
    os.utime(src, ns=(added.mtime_ns + 10**9, added.mtime_ns + 10**9))
    with pytest.raises(UserFacingError, match="SHA-256 no longer matches"):
        models.resolve(added.name)
    src.unlink()
    with pytest.raises(UserFacingError, match="is gone"):
        models.resolve(added.name)


def test_a_file_only_touched_is_hashed_again_and_accepted(models: LocalModels, tmp_path: Path) -> None:
    src = write_gguf(tmp_path / "m.gguf", padding=100)
    added = models.add(src)
    os.utime(src, ns=(added.mtime_ns + 10**9, added.mtime_ns + 10**9))
    again = models.resolve(added.name)
    assert again.mtime_ns == added.mtime_ns + 10**9
    assert models.installed()[0].mtime_ns == again.mtime_ns  # recorded: no second hash next time


def test_the_catalog_marks_the_half_billion_model_as_default_with_its_known_checksum() -> None:
    entry = catalog.default_entry()
    assert entry.name == "qwen2.5-coder-0.5b" and entry.size == 491_400_064
    assert entry.sha256 == "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"
    assert "not checked against the Hub" in entry.note
    assert all(e.licence and e.context_window and e.tool_calls for e in catalog.CATALOG)
    assert catalog.by_sha256(entry.sha256.upper()) == entry
    assert default_name("org/Qwen2.5-Coder-0.5B-Instruct-Q4_K_M.gguf") == "qwen2.5-coder-0.5b-instruct-q4_k_m"


def _gguf(pairs: bytes, keys: int, tensors: int = 1) -> bytes:
    return b"GGUF" + struct.pack("<IQQ", 3, tensors, keys) + pairs


def _refused_everywhere(models: LocalModels, path: Path, data: bytes, match: str) -> None:
    path.write_bytes(data)
    with pytest.raises(UserFacingError, match=match):
        read_metadata(path)
    with pytest.raises(UserFacingError, match=match):
        models.add(path)
    assert models.installed() == []


def test_a_gguf_with_arrays_nested_200000_deep_is_refused_clearly(models: LocalModels, tmp_path: Path) -> None:
    nested = gguf_string("x") + struct.pack("<I", 9) + struct.pack("<IQ", 9, 1) * 200_000 + struct.pack("<IQ", 0, 0)
    _refused_everywhere(models, tmp_path / "nested.gguf", _gguf(nested, 1), r"corrupt GGUF header \(arrays nested")


def test_a_gguf_array_of_2_to_the_62_values_is_refused_clearly(models: LocalModels, tmp_path: Path) -> None:
    for inner in (4, 8):  # 2^62 uint32 (2^64 bytes to skip), 2^62 strings
        huge = gguf_string("x") + struct.pack("<IIQ", 9, inner, 2**62) + bytes(64)
        _refused_everywhere(models, tmp_path / f"huge-{inner}.gguf", _gguf(huge, 1),
                            "an array of 4611686018427387904 values, more than the file holds")


def test_a_gguf_with_3000000_keys_is_refused_without_reading_them(models: LocalModels, tmp_path: Path) -> None:
    pair = gguf_string("k") + struct.pack("<IB", 0, 1)
    _refused_everywhere(models, tmp_path / "keys.gguf", _gguf(pair * 3_000_000, 3_000_000),
                        "3000000 metadata keys, more than")


def test_a_gguf_header_without_tensors_or_cut_short_is_not_a_model(models: LocalModels, tmp_path: Path) -> None:
    _refused_everywhere(models, tmp_path / "truncated.gguf", gguf_bytes()[:8], "is cut short")
    for cut in (60, 75, len(gguf_bytes()) - 4):  # in the metadata, in the tensors' descriptions, before their data
        _refused_everywhere(models, tmp_path / f"cut-{cut}.gguf", gguf_bytes()[:cut], "is cut short")
    pair = gguf_string("general.architecture") + struct.pack("<I", 8) + gguf_string("llama")
    _refused_everywhere(models, tmp_path / "empty.gguf", _gguf(pair, 1, tensors=0) + bytes(64), "has no tensors")
    assert read_metadata(write_gguf(tmp_path / "ok.gguf")) == {"general.architecture": "llama"}
