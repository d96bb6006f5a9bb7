"""Tabs presenter: open, close, reopen, step with wrap, rename and removal retargeting."""

from llmspace.presenters.tabs import TabsPresenter


def test_opening_a_tab_inserts_it_after_the_active_one_and_activates_it():
    t = TabsPresenter(["a.json", "b.json"], "a.json")
    assert t.open("c.json") is True
    assert t.tabs == ["a.json", "c.json", "b.json"] and t.active == "c.json"
    assert t.open("a.json") is False and t.active == "a.json"


def test_closing_the_active_tab_selects_a_neighbour_and_reopen_restores_it():
    t = TabsPresenter(["a.json", "b.json", "c.json"], "b.json")
    t.close("b.json")
    assert t.tabs == ["a.json", "c.json"] and t.active == "c.json"
    assert t.reopen() == ["b.json"]
    assert "b.json" in t.tabs and t.active == "b.json"


def test_close_others_and_close_all_are_reopened_as_one_group():
    t = TabsPresenter(["a.json", "b.json", "c.json"], "b.json")
    t.close_others("b.json")
    assert t.tabs == ["b.json"]
    t.close_all()
    assert t.tabs == [] and t.active is None
    assert t.reopen() == ["b.json"]
    assert sorted(t.reopen()) == ["a.json", "c.json"]


def test_next_and_previous_wrap_around():
    t = TabsPresenter(["a.json", "b.json"], "b.json")
    assert t.step(+1) == "a.json"
    assert t.step(-1) == "b.json"
    assert TabsPresenter().step(1) is None


def test_renaming_a_folder_retargets_tabs_under_it():
    t = TabsPresenter(["f/a.json", "g.json"], "f/a.json")
    t.renamed("f", "h")
    assert t.tabs == ["h/a.json", "g.json"] and t.active == "h/a.json"


def test_removed_threads_close_their_tabs_without_a_reopen_entry():
    t = TabsPresenter(["f/a.json", "g.json"], "g.json")
    assert t.removed("f") == ["f/a.json"]
    assert t.tabs == ["g.json"] and t.reopen() == []
