"""The sanitiser: no control sequence of a program, a model or a plugin reaches the terminal.

Covers every form a terminal acts on: C0 and C1 controls (U+009B CSI, U+009D OSC, U+0090 DCS and
the rest of U+0080-U+009F), CSI sequences, OSC/DCS/SOS/PM/APC strings ended by BEL or ST (their
payload goes too), two-byte escapes (``ESC c``) and charset designations (``ESC ( 0``); SGR
styles survive only where asked for (``keep_style``)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pi_host.lib.render import sanitize
from pi_host.lib.render.controls import safe_for_terminal, strip_controls
from tests.support.budget import examples

SGR_RE = re.compile(r"\x1b\[[0-9;:]*m")
C1 = [chr(code) for code in range(0x80, 0xA0)]
STRINGS = {
    "OSC": ("\x1b]", "\x9d"),
    "DCS": ("\x1bP", "\x90"),
    "SOS": ("\x1bX", "\x98"),
    "PM": ("\x1b^", "\x9e"),
    "APC": ("\x1b_", "\x9f"),
}
TERMINATORS = ["\x07", "\x1b\\", "\x9c"]


def _sanitize_styled(text: str) -> str:
    return sanitize(text, keep_style=True)


def _strip_styled(text: str) -> str:
    return strip_controls(text, keep_style=True)


KEEPS_STYLE = (_sanitize_styled, _strip_styled, safe_for_terminal)
CLEANERS = [
    pytest.param(sanitize, id="sanitize"),
    pytest.param(_sanitize_styled, id="sanitize-keep-style"),
    pytest.param(strip_controls, id="strip_controls"),
    pytest.param(_strip_styled, id="strip_controls-keep-style"),
    pytest.param(safe_for_terminal, id="safe_for_terminal"),
]


def unsafe(text: str) -> list[str]:
    """What of ``text`` a terminal would act on, SGR styles aside."""
    rest = SGR_RE.sub("", text)
    return [ch for ch in rest if (ord(ch) < 0x20 and ch not in "\n\t") or 0x7F <= ord(ch) <= 0x9F]


@pytest.mark.parametrize("clean", CLEANERS)
def test_every_c1_control_is_removed(clean):
    for control in C1:
        out = clean(f"a{control}\nb")  # an introducer (CSI, OSC...) would take a "b" as its own
        assert unsafe(out) == [], f"U+{ord(control):04X}"
        assert out in ("a\nb", "ab"), f"U+{ord(control):04X}"


@pytest.mark.parametrize("clean", CLEANERS)
def test_csi_sequences_are_removed_whole(clean):
    for csi in ("\x1b[", "\x9b"):
        for body in ("?1049h", "6n", "21t", "2J", "H", "1;31m", ">0;1c", "?25l", "3 q"):
            out = clean(f"a{csi}{body}b")
            if csi == "\x1b[" and body == "1;31m" and clean in KEEPS_STYLE:
                assert out == f"a{csi}{body}b"  # an SGR style, kept where styles are kept
            else:
                assert out == "ab", repr(csi + body)


@pytest.mark.parametrize("clean", CLEANERS)
@pytest.mark.parametrize("kind", sorted(STRINGS))
def test_strings_go_with_their_payload(clean, kind):
    for opener in STRINGS[kind]:  # 7-bit and C1
        for end in TERMINATORS:
            out = clean(f"a{opener}52;c;SEFDS0VE payload{end}b")
            assert out == "ab", repr(opener + end)


@pytest.mark.parametrize("clean", CLEANERS)
def test_the_issues_osc_examples_leave_no_trace(clean):
    text = (
        "x\x1b]52;c;SEFDS0VE\x07"
        "\x1b]0;PWNED\x07\x1b]2;PWNED\x1b\\"
        "\x1b]8;;http://evil.example/\x1b\\link\x1b]8;;\x1b\\y"
    )
    out = clean(text)
    assert "PWNED" not in out and "SEFDS0VE" not in out
    if clean is safe_for_terminal:  # drawn output: a plain link is a renderer's own
        out = strip_osc8(out)
    assert "evil" not in out and out == "xlinky"


@pytest.mark.parametrize("clean", CLEANERS)
def test_a_lone_escape_with_any_final_byte_is_removed(clean):
    for final in (chr(c) for c in range(0x30, 0x7F) if chr(c) not in "[]PX^_"):
        assert clean(f"a\x1b{final}b") == "ab", repr(final)


@pytest.mark.parametrize("clean", CLEANERS)
def test_charset_designations_and_other_nf_escapes_are_removed(clean):
    for escape in ("\x1b(0", "\x1b)0", "\x1b(B", "\x1b*<", "\x1b#8", "\x1b%G", "\x1b F"):
        assert clean(f"a{escape}qqq") == "aqqq", repr(escape)


@pytest.mark.parametrize("clean", CLEANERS)
def test_broken_sequences_drop_the_introducer_and_at_most_their_line(clean):
    assert clean("a\x1b") == "a"
    assert clean("a\x1b\x1bcb") == "ab"
    assert clean("a\x9b") == "a"
    # an unterminated string ends at the next escape or line break: the text after it stays
    assert clean("a\x1b]52;c;SEFDS0VE\nb") in ("a\nb", "ab")  # safe_for_terminal drops breaks
    assert clean("a\x1b]0;title\x1b[1mb").replace("\x1b[1m", "") == "ab"
    assert clean("a\x1bPq#0;2;0;0;0\x1b\\b") == "ab"  # a DCS ended by ST


def test_c0_controls_are_removed_but_line_breaks_and_tabs_kept():
    text = "".join(chr(c) for c in range(0x20) if chr(c) not in "\x1b\r") + "\x7f" + "ok"
    assert sanitize(text) == "    \nok"  # the tab expanded, the line break kept
    assert strip_controls("a\tb\nc\x07\x08\x0e\x0f\x00d") == "a\tb\ncd"
    assert "\r" not in strip_controls("a\rb")
    assert safe_for_terminal("a\tb\x01c\x02d\re") == "a\tbcde"


def test_styles_are_kept_only_when_asked_for():
    styled = "\x1b[1;31mred\x1b[0m \x1b[38;2;1;2;3mrgb\x1b[39m"
    assert sanitize(styled, keep_style=True) == styled
    assert strip_controls(styled, keep_style=True) == styled
    assert safe_for_terminal(styled) == styled
    assert sanitize(styled) == "red rgb"
    assert strip_controls(styled) == "red rgb"
    # the C1 form of an SGR is not one of ours: it goes
    assert sanitize("\x9b31mx", keep_style=True) == "x"


def test_safe_for_terminal_keeps_plain_links_and_drops_tainted_ones():
    link = "\x1b]8;;https://example.com/a?b=1\x1b\\text\x1b]8;;\x1b\\"
    assert safe_for_terminal(link) == link
    bel_link = "\x1b]8;id=1;https://example.com\x07text\x1b]8;;\x07"
    assert safe_for_terminal(bel_link) == bel_link
    tainted = "\x1b]8;;https://e.com/\x9d2;x\x9c\x1b\\text\x1b]8;;\x1b\\"
    out = safe_for_terminal(tainted)
    assert "\x9d" not in out and "text" in out and unsafe(strip_osc8(out)) == []


def strip_osc8(text: str) -> str:
    return re.sub(r"\x1b\]8;[^\x07\x1b]*(?:\x07|\x1b\\)", "", text)


def test_plain_text_is_returned_unchanged():
    text = "plain café 日本 ✓ — tabs\tand\nlines"
    assert strip_controls(text) == text
    assert safe_for_terminal("one line café") == "one line café"


HOSTILE = st.text(
    alphabet=st.sampled_from(
        ["a", " ", "\n", "\t", "\r", "\x07", "\x1b", "[", "]", "\\", "P", "(", "0", "c", ";", "8", "m", "1"]
        + ["\x9b", "\x9c", "\x9d", "\x90", "\x98", "\x9e", "\x9f", "\x85", "\x7f", "\x00", "\x01", "\x02"]
    ),
    max_size=60,
)


@settings(max_examples=examples(400), deadline=None, derandomize=True)
@given(HOSTILE)
def test_no_input_leaves_anything_but_sgr(text):
    for out in (
        sanitize(text),
        sanitize(text, keep_style=True),
        strip_controls(text),
        strip_controls(text, keep_style=True),
    ):
        assert unsafe(out) == []
        assert "\x1b" not in SGR_RE.sub("", out)
    assert "\x1b" not in sanitize(text) and "\x1b" not in strip_controls(text)
    safe = safe_for_terminal(text.replace("\n", ""))
    assert unsafe(strip_osc8(safe)) == []


@settings(max_examples=examples(300), deadline=None, derandomize=True)
@given(HOSTILE)
def test_no_sequence_spans_a_line_break(text):
    """What lets a growing text be cleaned past its last line break only."""
    for keep_style in (False, True):
        whole = strip_controls(text, keep_style=keep_style)
        by_line = "\n".join(strip_controls(line, keep_style=keep_style) for line in text.split("\n"))
        assert whole == by_line
