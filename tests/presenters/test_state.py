"""UI state files: window.json in the original's shape, ui-state.json, defaults and clamping."""

import json

from llmspace.paths import DataRoot
from llmspace.presenters.state import StateStore, UiState, WindowState, clamp_zoom


def test_window_state_round_trips_in_the_original_shape_with_a_trailing_newline(home):
    store = StateStore(DataRoot(home))
    st = store.load_window()
    assert (st.width, st.height, st.x, st.y) == (1280, 800, 80, 80)
    st.width, st.maximized, st.zoom = 1000, True, 1.2
    store.save_window(st)
    raw = store.window_path.read_text("utf-8")
    assert raw.endswith("}\n")
    data = json.loads(raw)
    assert data["frame"]["width"] == 1000 and data["isMaximized"] is True and data["zoom"] == 1.2
    assert store.load_window().zoom == 1.2


def test_zoom_is_clamped_and_unknown_keys_are_kept():
    st = WindowState.from_data({"zoom": 9, "custom": 1, "frame": {"width": "x"}})
    assert st.zoom == 3.0 and st.to_data()["custom"] == 1 and st.width == 1280
    assert clamp_zoom(0.1) == 0.3


def test_a_broken_ui_state_file_falls_back_to_defaults(home):
    store = StateStore(DataRoot(home))
    store.ui_path.write_text("{nope", "utf-8")
    assert store.load_ui() == UiState()


def test_ui_state_keeps_tabs_expanded_folders_and_switches(home):
    store = StateStore(DataRoot(home))
    st = UiState(theme="dark", open_tabs=["a.json"], active_tab="a.json", expanded=["f"], react=True, rendering="lite")
    store.save_ui(st)
    assert store.load_ui() == st


def test_models_page_rows_keys_custom_providers_and_default(app):
    import pytest

    from llmspace.errors import UserFacingError
    from llmspace.presenters.models_page import ModelsPagePresenter

    p = ModelsPagePresenter(app.models)
    rows = {r.id: r for r in p.rows()}
    assert rows and all(r.status for r in rows.values())
    p.add_custom("mine", "Mine", "http://127.0.0.1:9/v1", "openai-completions", "m1, m2", "sk-test")
    mine = {r.id: r for r in p.rows()}["mine"]
    assert mine.models == 2 and mine.status == "ready"
    with pytest.raises(UserFacingError):
        p.add_custom("mine2", "", "", "openai-completions", "m")
    p.set_default("mine/m1")
    assert p.default_label() == "mine/m1"
    builtin = next(r for r in p.rows() if r.builtin)
    with pytest.raises(UserFacingError):
        p.remove(builtin.id)
    p.remove("mine")
    assert "mine" not in {r.id for r in p.rows()}


def test_a_malformed_or_wrong_shaped_state_file_is_reported_and_never_overwritten(home):
    store = StateStore(DataRoot(home))
    store.window_path.write_text('{"frame": {"x": NaN, "width": "wide"}, "zoom": 1.5}', "utf-8")
    store.ui_path.write_text("{nope", "utf-8")
    window_bytes, ui_bytes = store.window_path.read_bytes(), store.ui_path.read_bytes()

    st, ui = store.load_window(), store.load_ui()
    assert st == WindowState() and ui == UiState()
    assert len(store.problems) == 2
    assert str(store.window_path) in store.problems[0] and "frame.x" in store.problems[0] and "frame.width" in store.problems[0]
    assert str(store.ui_path) in store.problems[1] and "line 1, column 2" in store.problems[1]

    st.width, ui.theme = 999, "dark"
    store.save_window(st)
    store.save_ui(ui)
    assert store.window_path.read_bytes() == window_bytes and store.ui_path.read_bytes() == ui_bytes


def test_wrong_types_in_ui_state_do_not_crash_and_name_the_key(home):
    store = StateStore(DataRoot(home))
    store.ui_path.write_text(json.dumps({"openTabs": 5, "expandedFolders": None, "reactLoop": "yes", "theme": "dark"}), "utf-8")
    ui = store.load_ui()
    assert ui == UiState()
    problem = store.problems[0]
    assert "openTabs" in problem and "expandedFolders" in problem and "reactLoop" in problem and "theme" not in problem


def test_a_fixed_state_file_is_saved_again(home):
    store = StateStore(DataRoot(home))
    store.ui_path.write_text("[]", "utf-8")
    store.load_ui()
    assert store.problems
    store.ui_path.write_text(json.dumps({"theme": "dark"}), "utf-8")
    ui = store.load_ui()
    assert ui.theme == "dark" and store.problems == []
    ui.react = True
    store.save_ui(ui)
    assert json.loads(store.ui_path.read_text("utf-8"))["reactLoop"] is True


def test_render_markdown_is_on_by_default_and_kept_when_turned_off():
    assert UiState().markdown is True
    off = UiState.from_data(UiState(markdown=False).to_data())
    assert off.markdown is False and off.to_data()["renderMarkdown"] is False
    problems: list[str] = []
    assert UiState.from_data({"renderMarkdown": "no"}, problems).markdown is True
    assert problems == ["renderMarkdown: expected true or false"]
