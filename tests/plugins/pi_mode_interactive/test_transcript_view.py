"""The transcript view widget on its own: given a block source, it draws only the rows on screen,
scrolls, jumps between prompts, searches and expands blocks, touching only the blocks it passes."""

from __future__ import annotations

from pi_mode_interactive.transcript_view import TranscriptView


class Blocks:
    """``count`` blocks: every tenth a prompt, every seventh an expandable tool block (5 rows
    collapsed, 20 expanded); records which blocks were drawn."""

    def __init__(self, count: int) -> None:
        self.n = count
        self.opened: set[int] = set()
        self.drawn: set[int] = set()

    def count(self) -> int:
        return self.n

    def is_prompt(self, i: int) -> bool:
        return i % 10 == 0

    def is_answer(self, i: int) -> bool:
        return i % 10 == 1

    def expandable(self, i: int) -> bool:
        return i % 7 == 3

    def is_expanded(self, i: int) -> bool:
        return i in self.opened

    def toggle(self, i: int) -> None:
        self.opened ^= {i}

    def lines(self, i: int, width: int) -> list[str]:
        self.drawn.add(i)
        rows = 20 if i in self.opened else (5 if self.expandable(i) else 2)
        return [f"block {i} row {r}" + ("x" * max(0, width - 40)) for r in range(rows)]

    def text(self, i: int) -> str:
        return "the unusual word ZEBRA" if i == 12 else f"block {i}"


def _view(count: int = 10_000, height: int = 20) -> tuple[TranscriptView, Blocks, list[str]]:
    source = Blocks(count)
    left: list[str] = []
    view = TranscriptView(source, on_leave=lambda: left.append("left"), paint=lambda name, text: text)
    view.width, view.height = 80, height
    return view, source, left


def test_it_opens_at_the_end_and_draws_only_the_visible_blocks():
    view, source, _ = _view()
    rows = view.visible()
    assert len(rows) == 20 and rows[-1][0] == 9_999
    assert len(source.drawn) < 15  # of 10,000


def test_pages_prompts_and_top_walk_only_what_they_pass():
    view, source, _ = _view()
    view.visible()
    view.scroll(-18)
    assert not view.follow and view.visible()[-1][0] < 9_999
    view.prompt(-1)
    assert source.is_prompt(view.block) and view.row == 0
    here = view.block
    view.prompt(-1)
    assert view.block == here - 10
    view.prompt(1)
    assert view.block == here
    view.top()
    assert (view.block, view.row) == (0, 0)
    assert len(source.drawn) < 80


def test_search_jumps_to_an_early_block_and_says_when_nothing_older_matches():
    view, _, _ = _view(count=2_000)
    view.visible()
    view._start_search()
    for char in "zebra":
        view._type(char)
    assert view.found == 12 and view.block <= 12 < view.block + 10
    view.search_step(-1)
    assert "no earlier match" in view.note


def test_tab_selects_an_expandable_block_and_enter_expands_it_in_place():
    view, source, _ = _view(count=100)
    view.visible()
    view.select(-1)
    view.select(-1)
    second_to_last = view.selected
    assert source.expandable(second_to_last) and second_to_last < 98
    view.toggle()
    assert source.is_expanded(second_to_last)
    assert [line for index, line in view.visible() if index == second_to_last][0].startswith("block")
    assert (view.block, view.row) == (second_to_last, 0)


def test_a_narrower_screen_reflows_and_leaving_calls_back():
    view, source, left = _view(count=50)
    view.visible()
    view.width = 50
    assert all(len(line) <= 50 for _, line in view.visible())
    view.on_leave()
    assert left == ["left"]


def test_copy_takes_the_selected_block_or_else_the_last_answer_on_screen():
    view, source, _ = _view(count=93)  # 91, an answer, is on screen
    copied: list[str] = []
    view.on_copy = lambda text: copied.append(text) or "test"
    view.visible()
    view.copy()
    assert copied == ["block 91"] and view.note == "copied 1 line (test)"
    view.select(-1)
    view.copy()
    assert copied[-1] == f"block {view.selected}" and source.expandable(view.selected)


def test_a_search_match_and_a_click_point_at_their_block():
    from prompt_toolkit.data_structures import Point
    from prompt_toolkit.mouse_events import MouseButton, MouseEvent, MouseEventType

    view, _, _ = _view(count=2_000)
    view.visible()
    view._start_search()
    for char in "zebra":
        view._type(char)
    assert view.selected == 12
    view.control.create_content(80, 20)
    row = next(n for n, (index, _) in enumerate(view.control.rows) if index == 14)
    view.control.mouse_handler(
        MouseEvent(Point(5, row), MouseEventType.MOUSE_UP, MouseButton.LEFT, frozenset())
    )
    assert view.selected == 14
