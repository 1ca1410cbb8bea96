"""The ``/`` and ``@`` menu's rows (drawn by pi_mode_interactive.completion_menu): pi's window,
columns, markers and colours, without a terminal."""

from __future__ import annotations

from pi_mode_interactive.completion_menu import max_visible, menu_lines, move, window

from pi_host.lib.render import strip_ansi


def paint(name: str, text: str) -> str:
    return f"<{name}>{text}</{name}>"


ITEMS = [(f"cmd{n}", f"does thing {n}") for n in range(10)]


def test_the_window_keeps_the_choice_in_the_middle_and_never_runs_past_the_ends():
    assert window(0, 10, 5) == (0, 5)
    assert window(None, 10, 5) == (0, 5)
    assert window(4, 10, 5) == (2, 7)
    assert window(9, 10, 5) == (5, 10)
    assert window(1, 3, 5) == (0, 3)


def test_rows_mark_the_choice_in_the_accent_mute_descriptions_and_count_the_position():
    lines = menu_lines(ITEMS, 6, 80, paint, visible=5, slash=True)
    assert len(lines) == 6
    assert lines[2] == "<accent>→ cmd6        does thing 6</accent>"  # 12 columns: the / minimum
    assert lines[0] == "  cmd4<muted>        does thing 4</muted>"
    assert lines[-1] == "<muted>  (7/10)</muted>"


def test_nothing_chosen_marks_no_row_and_a_short_list_has_no_position_line():
    lines = menu_lines(ITEMS[:3], None, 80, paint)
    assert [strip_ansi(line)[:2] for line in lines] == ["  ", "  ", "  "]
    assert not any("accent" in line for line in lines)


def test_narrow_terminals_drop_descriptions_and_long_names_are_cut():
    assert menu_lines(ITEMS[:1], 0, 30, paint) == ["<accent>→ cmd0</accent>"]
    long = [("x" * 50, "desc")]
    row = menu_lines(long, None, 80, paint, slash=True)[0]
    assert row == "  " + "x" * 30 + "<muted>  desc</muted>"  # the 32-column maximum, gap included
    assert all(len(strip_ansi(line)) <= 80 for line in menu_lines(long, 0, 80, paint))


def test_autocomplete_max_visible_is_bounded_like_pi():
    assert max_visible({}) == 5
    assert max_visible({"autocompleteMaxVisible": 1}) == 3
    assert max_visible({"autocompleteMaxVisible": 50}) == 20
    assert max_visible({"autocompleteMaxVisible": 8}) == 8
    assert max_visible({"autocompleteMaxVisible": "8"}) == 5


def test_moving_wraps_pages_stop_at_the_ends_and_the_text_is_untouched():
    from prompt_toolkit.buffer import Buffer, CompletionState
    from prompt_toolkit.completion import Completion
    from prompt_toolkit.document import Document

    buffer = Buffer(document=Document("/c"))
    completions = [Completion(f"/c{n} ", start_position=-2) for n in range(4)]
    buffer.complete_state = CompletionState(buffer.document, completions, complete_index=0)
    move(buffer, -1)
    assert buffer.complete_state.complete_index == 3 and buffer.text == "/c"
    move(buffer, 1)
    assert buffer.complete_state.complete_index == 0
    move(buffer, 5)
    assert buffer.complete_state.complete_index == 3
    buffer.complete_state.complete_index = None
    move(buffer, 1)
    assert buffer.complete_state.complete_index == 0
