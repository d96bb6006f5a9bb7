"""Message-card labels and drag-and-drop positions computed without Tk."""

from __future__ import annotations

import base64

from llmspace.presenters.messages import drop_line, drop_position, drop_slot, image_label


def test_a_small_image_shows_its_size_in_bytes_instead_of_zero_kb():
    data = base64.b64encode(b"x" * 300).decode()
    assert image_label("image/png", data) == "[image] image/png · 300 bytes"


def test_larger_images_show_kilobytes_and_megabytes_with_one_decimal():
    assert image_label("image/jpeg", base64.b64encode(b"x" * 2048).decode()).endswith("· 2.0 KB")
    assert image_label("image/jpeg", base64.b64encode(b"x" * (3 * 1024 * 1024 + 1)).decode()).endswith("· 3.0 MB")


def test_padding_is_not_counted_as_image_bytes():
    for n in (1, 2, 3, 4, 5):
        assert image_label("image/gif", base64.b64encode(b"y" * n).decode()).endswith(f"· {n} bytes")


# -- drag and drop ---------------------------------------------------------------------------
CARDS = [(3, 0, 100), (4, 104, 60), (5, 168, 200)]  # (message index, top, height) of the shown cards


def test_the_drop_gap_is_before_the_first_card_whose_middle_is_below_the_pointer():
    assert drop_slot(-20, CARDS) == 3
    assert drop_slot(49, CARDS) == 3
    assert drop_slot(51, CARDS) == 4
    assert drop_slot(140, CARDS) == 5
    assert drop_slot(300, CARDS) == 6  # below the middle of the last card: after it
    assert drop_slot(10, []) is None


def test_the_drop_line_sits_at_the_top_of_the_card_after_the_gap_or_below_the_last():
    assert drop_line(3, CARDS) == 0
    assert drop_line(5, CARDS) == 168
    assert drop_line(6, CARDS) == 368


def test_a_dropped_message_lands_in_the_gap_counted_before_it_was_lifted():
    assert drop_position(4, 0) == 0
    assert drop_position(0, 3) == 2  # the gap after message 2
    assert drop_position(2, 2) == 2 and drop_position(2, 3) == 2  # either gap beside it: no move


def test_dropping_a_message_is_one_undo_step(app):
    from llmspace.presenters.editor import EditorPresenter

    rel = app.workspace.create_thread("", "drops")
    ed = EditorPresenter(app.workspace, rel)
    ed.message_intents.set_message_text(0, "a")
    ed.message_intents.add_message()
    ed.message_intents.add_message()
    ids = [m.id for m in ed.messages]
    steps = len(ed.undo_history.undo)
    assert ed.message_intents.drop_message(0, 3)
    assert [m.id for m in ed.messages] == [ids[1], ids[2], ids[0]] and len(ed.undo_history.undo) == steps + 1
    assert not ed.message_intents.drop_message(1, 2) and len(ed.undo_history.undo) == steps + 1
    ed.undo()
    assert [m.id for m in ed.messages] == ids
