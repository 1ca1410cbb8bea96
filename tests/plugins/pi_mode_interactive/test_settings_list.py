"""``/settings``' entries: pi 1.6.0's list (labels, order, settings.json keys) with a description
each, and the values Enter cycles through, stored as pi stores them."""

from __future__ import annotations

from pi_mode_interactive import settings_list
from pi_mode_interactive.settings_list import BY_ID, ENTRIES, next_value, shown_value
from pi_mode_interactive.settings_view import HighlightPicker

PI_ENTRIES = [
    ("Auto-compact", "compaction.enabled"),
    ("Auto-resize images", "images.autoResize"),
    ("Block images", "images.blockImages"),
    ("Skill commands", "enableSkillCommands"),
    ("Show hardware cursor", "showHardwareCursor"),
    ("Editor padding", "editorPaddingX"),
    ("Output padding", "outputPad"),
    ("Autocomplete max items", "autocompleteMaxVisible"),
    ("Clear on shrink", "terminal.clearOnShrink"),
    ("Terminal progress", "terminal.showTerminalProgress"),
    ("Steering mode", "steeringMode"),
    ("Follow-up mode", "followUpMode"),
    ("Transport", "transport"),
    ("Session share destination", "sessionShareDestination"),
    ("HTTP idle timeout", "httpIdleTimeoutMs"),
    ("Cache warming", "cacheWarming"),
    ("Hide thinking", "hideThinkingBlock"),
    ("Mermaid diagrams", "markdown.mermaid"),
    ("Cache miss notices", "showCacheMissNotices"),
    ("Collapse changelog", "collapseChangelog"),
    ("Quiet startup", "quietStartup"),
    ("Install telemetry", "enableInstallTelemetry"),
    ("Default project trust", "defaultProjectTrust"),
    ("Double-escape action", "doubleEscapeAction"),
    ("Tree filter mode", "treeFilterMode"),
    ("Warnings", "warnings"),
    ("Default thinking level per model", "modelThinkingLevels"),
    ("TUI mode", "tuiMode"),
    ("Fullscreen exit output", "fullscreenExitOutput"),
    ("Fullscreen scrollbar", "fullscreenScrollbar"),
    ("Fullscreen copy on select", "fullscreenCopyOnSelect"),
    ("Fullscreen wheel scrolling", "fullscreenWheelScrollLines"),
    ("Theme", "theme"),
]
"""pi 1.6.0's settings screen in a terminal without inline images, and the key each entry writes."""


def test_the_entries_are_pis_in_pis_order_each_described_on_one_line():
    assert [(entry.label, entry.key) for entry in ENTRIES] == PI_ENTRIES
    for entry in ENTRIES:
        assert entry.description and "\n" not in entry.description and len(entry.description) <= 100
        assert entry.submenu or entry.values, entry.id


def test_values_cycle_and_are_stored_as_pi_stores_them():
    assert shown_value(BY_ID["autocompact"], {}) == "true"
    assert next_value(BY_ID["autocompact"], {}) == ("false", False)
    assert next_value(BY_ID["autocompact"], {"compaction": {"enabled": False}}) == ("true", True)
    assert next_value(BY_ID["editor-padding"], {"editorPaddingX": 3}) == ("0", 0)
    assert shown_value(BY_ID["http-idle-timeout"], {}) == "5 min"
    assert next_value(BY_ID["http-idle-timeout"], {}) == ("disabled", 0)
    assert next_value(BY_ID["http-idle-timeout"], {"httpIdleTimeoutMs": 0}) == ("30 sec", 30_000)
    assert next_value(BY_ID["default-project-trust"], {}) == ("Always trust", "always")
    assert next_value(BY_ID["quiet-startup"], {"quietStartup": True}) == ("header", "header")
    assert next_value(BY_ID["quiet-startup"], {"quietStartup": "header"}) == ("false", False)
    # a wheel step set by hand is offered where it is, then the usual steps follow
    wheel = BY_ID["fullscreen-wheel-scroll-lines"]
    assert shown_value(wheel, {"fullscreenWheelScrollLines": 7}) == "7"
    assert next_value(wheel, {"fullscreenWheelScrollLines": 7}) == ("auto", "auto")
    assert next_value(wheel, {}) == ("1", 1)
    assert shown_value(BY_ID["model-thinking"], {"modelThinkingLevels": {"a/b": "high"}}) == "1 configured"
    assert shown_value(BY_ID["model-thinking"], {}) == "none"


def test_an_unknown_stored_value_starts_the_cycle_at_the_first_choice():
    assert next_value(BY_ID["transport"], {"transport": "carrier-pigeon"}) == ("sse", "sse")
    assert settings_list.HTTP_IDLE_CHOICES[-1] == ("disabled", 0)


def test_the_highlight_picker_reports_each_row_it_moves_to_and_filtering():
    seen = []
    picker = HighlightPicker(
        "t", [("a", "alpha", ""), ("b", "beta", ""), ("c", "gamma", "")], on_highlight=seen.append
    )
    picker.move(1)
    picker.move(1)
    picker.move(1)  # wraps to the first row
    picker.filter_buffer.text = "bet"
    picker.filter_buffer.text = "be"  # the same row: nothing to report
    assert seen == ["b", "c", "a", "b"]
