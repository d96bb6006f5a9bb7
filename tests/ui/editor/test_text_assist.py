"""Variables while typing, in a real window: `{{` opens the list of the thread's variables in
the system prompt, in message text boxes and in tool results, filtered as the name is typed
(Enter/Tab/click insert `name}}`, Escape closes); resting the pointer on a `{{name}}` shows the
value the run would use (or why it has none); every message text box highlights `{{var}}` and
`{% tag %}` in the theme's readable colours."""

from __future__ import annotations

import orjson
import pytest

from llmspace.jsonio import write_bytes_atomic
from llmspace.ui.theme import contrast_ratio

from ..conftest import pump_until

KEYSYMS = {"{": "braceleft", "}": "braceright", "_": "underscore", " ": "space", ":": "colon"}


@pytest.fixture
def ed(window, app):
    write_bytes_atomic(app.workspace.root / "assist.json", orjson.dumps({
        "title": "assist", "context": {
            "systemPrompt": "You help {{customer}}. {% if vip %}Be nice.{% endif %}",
            "tools": [{"type": "function", "name": "lookup", "description": "Look up",
                       "parameters": {"type": "object", "properties": {}}}],
            "variableVariants": {"active": "default", "variants": {"default": {
                "customer": "Acme Corp", "long_note": "word " * 400}}},
            "messages": [
                {"id": "u1", "role": "user", "content": [{"type": "text", "text": "Hello {{customer}}, see {{long_note}}"}]},
                {"id": "a1", "role": "assistant", "content": [{"type": "text", "text": "Hi {{customer}}"}],
                 "toolCalls": [{"id": "c1", "input": {"name": "lookup", "arguments": {}},
                                "output": {"content": [{"type": "text", "text": "for {{customer}}"}]}}]}]}}))
    window.tree_view.refresh()
    view = window.open_thread("assist.json")
    view.list.follow = False
    view.list.first = 0
    view.list.render()
    pump_until(window.root, lambda: view.list.cards.get("u1") is not None and view.list.cards["u1"].winfo_ismapped(), 10)
    return view


def type_keys(widget, text: str) -> None:
    widget.focus_force()
    for ch in text:
        keysym = KEYSYMS.get(ch, ch)
        widget.event_generate("<KeyPress>", keysym=keysym)
        widget.event_generate("<KeyRelease>", keysym=keysym)
    widget.update()


def press(widget, keysym: str) -> None:
    widget.focus_force()
    widget.event_generate("<KeyPress>", keysym=keysym)
    widget.update()


def hover_over(window, text, index: str):
    """Rest the pointer on the character at `index` of a Text; returns its VariableHover's text."""
    text.see(index)
    window.root.update()
    x, y, _w, h = text.bbox(index)
    text.event_generate("<Motion>", x=x + 1, y=y + h // 2)
    return text


def test_two_braces_in_the_system_prompt_offer_the_variables_filtered_as_you_type(ed, window):
    t = ed.settings.prompt
    completion = ed.settings.prompt_assist.completion
    t.mark_set("insert", "end")
    type_keys(t, " Date: {{")
    assert completion.is_open
    assert {"customer", "current_date", "long_note"} <= set(completion.names())
    assert completion.listbox.winfo_ismapped()
    type_keys(t, "cu")
    assert completion.names() == ["current_date", "current_working_directory", "customer"]
    press(t, "Down")
    press(t, "Tab")  # the second entry
    assert not completion.is_open
    assert t.get("1.0", "end-1c").endswith(" Date: {{current_working_directory}}")
    assert ed.p.system_prompt.endswith("{{current_working_directory}}")
    type_keys(t, " {{zz")  # no variable matches: the list closes
    assert not completion.is_open
    type_keys(t, " {{")
    assert completion.is_open
    press(t, "Escape")
    assert not completion.is_open and t.get("1.0", "end-1c").endswith("{{zz {{")


def test_enter_completes_in_a_message_and_a_click_in_a_tool_result(ed, window):
    card = ed.list.cards["u1"]
    t = card.text
    t.mark_set("insert", "end")
    type_keys(t, " and {{cus")
    assert card.text_assist.completion.names() == ["customer"]
    press(t, "Return")
    assert ed.p.messages[0].text() == "Hello {{customer}}, see {{long_note}} and {{customer}}"
    assert "\n" not in t.get("1.0", "end-1c")  # Enter picked the name, it did not break the line
    card = ed.list.cards["a1"]
    rt = card.results["c1"]
    rt.mark_set("insert", "end")
    type_keys(rt, " {{long")
    completion = card.result_assists["c1"].completion
    assert completion.names() == ["long_note"]
    lb = completion.listbox
    window.root.update()
    _x, y, _w, h = lb.bbox(0)
    lb.event_generate("<ButtonPress-1>", x=5, y=y + h // 2)
    window.root.update()
    assert ed.p.messages[1].toolCalls[0].output.text() == "for {{customer}} {{long_note}}"


def test_resting_on_a_variable_shows_its_value_as_the_run_would_use_it(ed, window):
    t = ed.settings.prompt
    hover_over(window, t, "1.12")  # inside {{customer}}
    tip = ed.settings.prompt_assist.hover
    pump_until(window.root, lambda: tip.tip_text(), 10)
    assert tip.tip_text() == "customer · text\nAcme Corp"
    assert tip.tip is not None and tip.tip.winfo_ismapped()
    t.event_generate("<Leave>")
    window.root.update()
    assert tip.tip is None
    # a long value is cut with "…"
    card = ed.list.cards["u1"]
    start = card.text.search("{{long_note}}", "1.0")
    hover_over(window, card.text, f"{start}+3c")
    hover = card.text_assist.hover
    pump_until(window.root, lambda: hover.tip_text(), 10)
    assert hover.tip_text().startswith("long_note · text\nword word") and hover.tip_text().endswith("…")
    assert len(hover.tip_text()) < 500


def test_the_tooltip_says_why_there_is_no_value_and_that_assistant_text_is_sent_as_written(ed, window):
    t = ed.settings.prompt
    t.insert("end", " {{stranger}}")
    window.root.update()
    start = t.search("{{stranger}}", "1.0")
    hover_over(window, t, f"{start}+4c")
    tip = ed.settings.prompt_assist.hover
    pump_until(window.root, lambda: tip.tip_text(), 10)
    assert "Unknown variable" in tip.tip_text()
    card = ed.list.cards["a1"]
    hover_over(window, card.text, "1.5")
    hover = card.text_assist.hover
    pump_until(window.root, lambda: hover.tip_text(), 10)
    assert "sent as written" in hover.tip_text()
    rt = card.results["c1"]
    hover_over(window, rt, "1.7")  # a function tool's result is rendered
    result_hover = card.result_assists["c1"].hover
    pump_until(window.root, lambda: result_hover.tip_text(), 10)
    assert result_hover.tip_text() == "customer · text\nAcme Corp"


def ranges(text, tag):
    r = text.tag_ranges(tag)
    return [text.get(r[i], r[i + 1]) for i in range(0, len(r), 2)]


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_message_text_boxes_highlight_variables_in_readable_colours(ed, window, theme):
    window.appearance.theme_var.set(theme)
    window.appearance.apply_theme()
    window.root.update()
    try:
        ed.list.render()
        card = ed.list.cards["u1"]
        assert ranges(card.text, "var") == ["{{customer}}", "{{long_note}}"]
        assert ranges(ed.list.cards["a1"].text, "var") == ["{{customer}}"]
        assert ranges(ed.list.cards["a1"].results["c1"], "var") == ["{{customer}}"]
        assert ranges(ed.settings.prompt, "tag") == ["{% if vip %}", "{% endif %}"]
        card.text.insert("end", " {% for x in y %}{{ x }}{% endfor %}")
        window.root.update()
        card = ed.list.cards["u1"]
        assert ranges(card.text, "tag") == ["{% for x in y %}", "{% endfor %}"]
        assert ranges(card.text, "var")[-1] == "{{ x }}"
        bg = str(card.text.cget("background"))
        for tag in ("var", "tag"):
            assert contrast_ratio(window.root, str(card.text.tag_cget(tag, "foreground")), bg) >= 4.5, (theme, tag)
    finally:
        window.appearance.theme_var.set("light")
        window.appearance.apply_theme()
        window.root.update()


def test_two_braces_open_the_list_even_when_shift_is_released_before_the_bracket_key(ed, window):
    """On a real keyboard `{` is Shift+[: released Shift first, the key's release reports
    `bracketleft`. The list follows the inserted text, not the release's keysym."""
    t = ed.settings.prompt
    completion = ed.settings.prompt_assist.completion
    t.mark_set("insert", "end")
    t.focus_force()
    for _ in range(2):
        t.event_generate("<KeyPress>", keysym="braceleft")
        t.event_generate("<KeyRelease>", keysym="Shift_L")
        t.event_generate("<KeyRelease>", keysym="bracketleft")
    t.update()
    assert t.get("1.0", "end-1c").endswith("{{")
    assert completion.is_open
    assert "customer" in completion.names()
