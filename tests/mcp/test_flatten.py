"""Flattening of MCP tool results to thread text (`mcp/flatten.py`)."""

from __future__ import annotations

import base64

from llmspace.mcp.flatten import flatten_result


def result(content: list[dict[str, object]], structured: object = None, is_error: bool = False) -> dict[str, object]:
    return {"content": content, "structuredContent": structured, "isError": is_error}


def test_text_parts_are_joined_by_blank_lines_and_trimmed() -> None:
    text, err = flatten_result(result([{"type": "text", "text": "  one"}, {"type": "text", "text": "two\n"}]))
    assert (text, err) == ("one\n\ntwo", False)


def test_images_and_audio_become_placeholders_with_decoded_size() -> None:
    data = base64.b64encode(b"x" * 123).decode()
    text, _ = flatten_result(result([{"type": "image", "mimeType": "image/jpeg", "data": data},
                                     {"type": "audio", "mimeType": "audio/wav", "data": data}]))
    assert text == "[image: image/jpeg, 123 bytes]\n\n[audio: audio/wav, 123 bytes]"


def test_embedded_resources_show_text_under_a_header_or_a_blob_summary() -> None:
    blob = base64.b64encode(b"abcd").decode()
    text, _ = flatten_result(result([
        {"type": "resource", "resource": {"uri": "file:///a.txt", "text": "hello"}},
        {"type": "resource", "resource": {"uri": "file:///b.bin", "mimeType": "application/zip", "blob": blob}},
        {"type": "resource_link", "uri": "file:///c", "name": "c"},
    ]))
    assert text == ("[resource: file:///a.txt]\nhello\n\n[resource: file:///b.bin] (application/zip, 4 bytes)"
                    "\n\n[resource link: c] file:///c")


def test_structured_content_is_appended_as_pretty_json() -> None:
    text, _ = flatten_result(result([{"type": "text", "text": "sum"}], {"total": 5, "ok": True}))
    assert text == 'sum\n\n{\n  "total": 5,\n  "ok": true\n}'


def test_is_error_is_kept() -> None:
    assert flatten_result(result([{"type": "text", "text": "bad"}], is_error=True)) == ("bad", True)


def test_output_is_capped_at_20000_characters_with_a_marker() -> None:
    text, _ = flatten_result(result([{"type": "text", "text": "y" * 20_001}]))
    assert text == "y" * 20_000 + "\n\n[truncated]"
    exact, _ = flatten_result(result([{"type": "text", "text": "y" * 20_000}]))
    assert exact == "y" * 20_000
