"""Themes: the built-in dark and light themes, the ``theme`` setting, and pi's theme JSON files
(tokens, ``vars``, colour forms, where files are found, what a broken one does)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pi_render_builtin import messages

from pi_host.lib.render import RenderContext, as_rendered, default_theme, render_diff, render_markdown
from pi_host.lib.render.theme import BUILTIN_THEMES, Theme, builtin_theme
from pi_host.lib.render.themes import (
    PI_TOKENS,
    TOKEN_FIELDS,
    ThemeError,
    available_themes,
    detect_background,
    load_theme,
    parse_color,
    pygments_style,
    theme_from_json,
    xterm_color,
)
from pi_host.protocol.messages import UserMessage
from tests.support.paths import REPO

TRUECOLOR = {"COLORTERM": "truecolor"}


def fg(hex_colour: str) -> str:
    r, g, b = (int(hex_colour[i : i + 2], 16) for i in (1, 3, 5))
    return f"\x1b[38;2;{r};{g};{b}m"


def bg(hex_colour: str) -> str:
    return fg(hex_colour).replace("[38;", "[48;")


@pytest.fixture
def dirs(tmp_path: Path) -> dict[str, str]:
    agent, project = tmp_path / "agent", tmp_path / "project"
    (agent / "themes").mkdir(parents=True)
    (project / ".pi" / "themes").mkdir(parents=True)
    return {"agent_dir": str(agent), "cwd": str(project)}


def write(directory: str, stem: str, document: object) -> Path:
    path = Path(directory) / f"{stem}.json"
    path.write_text(document if isinstance(document, str) else json.dumps(document))
    return path


def user_theme(dirs, stem, document):
    return write(str(Path(dirs["agent_dir"], "themes")), stem, document)


def project_theme(dirs, stem, document):
    return write(str(Path(dirs["cwd"], ".pi", "themes")), stem, document)


def load(name, dirs, trusted=True, environ=TRUECOLOR, **kw):
    return load_theme(name, project_trusted=trusted, environ=environ, **dirs, **kw)


# --------------------------------------------------------------------------- built-ins


def test_builtins():
    assert BUILTIN_THEMES == ("dark", "light")
    assert default_theme("truecolor") == builtin_theme("dark", "truecolor") == Theme()
    dark, light = builtin_theme("dark", "256"), builtin_theme("light", "256")
    assert (dark.name, dark.appearance, light.name, light.appearance) == ("dark", "dark", "light", "light")
    assert light.color_system == "256" and light.code_theme != dark.code_theme
    assert light.user_bg != dark.user_bg
    with pytest.raises(KeyError):
        builtin_theme("solarized")


def _contrast(a: str, b: str) -> float:
    def luminance(h: str) -> float:
        values = [int(h[i : i + 2], 16) / 255 for i in (1, 3, 5)]
        lin = [v / 12.92 if v <= 0.04045 else ((v + 0.055) / 1.055) ** 2.4 for v in values]
        return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]

    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def test_light_theme_is_readable_on_white():
    light = builtin_theme("light")
    for name in (
        "accent",
        "muted",
        "success",
        "error",
        "warning",
        "tool_title",
        "heading",
        "link",
        "inline_code",
    ):
        assert _contrast(getattr(light, name), "#ffffff") >= 4.5, name
        assert _contrast(getattr(light, name), light.user_bg) >= 3.5, name
    for name in ("user_bg", "tool_pending_bg", "tool_success_bg", "tool_error_bg"):
        assert _contrast(getattr(light, name), "#ffffff") < 1.3, name  # pale boxes


def test_light_theme_renders_through_the_builtin_renderers():
    light = builtin_theme("light", "truecolor")
    user = messages.render_user(UserMessage(content="hello"), RenderContext(width=40, theme=light))
    assert bg(light.user_bg) in as_rendered(user).text
    assert bg(builtin_theme("dark").user_bg) not in as_rendered(user).text
    diff = render_diff(" 1 a\n-2 b\n+2 c", light, 40)
    assert fg(light.diff_added) in diff and fg(light.diff_removed) in diff
    r, g, b = (int(light.heading[i : i + 2], 16) for i in (1, 3, 5))
    assert f"38;2;{r};{g};{b}m" in render_markdown("# Title", 40, light)  # after bold, underline


# --------------------------------------------------------------------------- colours


def test_colour_forms():
    assert parse_color("#0AF") == "#00aaff"
    assert parse_color("#112233") == "#112233"
    assert parse_color("") == ""
    assert parse_color(196) == "#ff0000"
    assert parse_color("okhsl(29.23 100% 56.8%)") == "#ff0000"  # sRGB red in OKHSL
    assert parse_color("okhsl(0 0% 50%)") == "#777777"
    assert parse_color("okhsl(233 41% 24%)") == "#213b49"
    assert parse_color("oklch(62% 0.1 200)") == "#1c989e"
    assert parse_color("OKLCH(0.9 0.05 90deg)") == "#ebddb9"
    assert parse_color("oklch(100% 0.3 150)") == "#ffffff"  # out of gamut: chroma reduced
    assert parse_color("oklch(0.5 0.4 30)") == "#bb0c00"
    for bad in ("#12", "#gggggg", "oklch(1 2)", "okhsl(a b c)", 256, -1, True, 1.5, None, [1]):
        with pytest.raises(ThemeError):
            parse_color(bad)


def test_xterm_palette():
    assert [xterm_color(i) for i in (0, 1, 9, 15)] == ["#000000", "#cd0000", "#ff0000", "#ffffff"]
    assert xterm_color(16) == "#000000" and xterm_color(231) == "#ffffff"
    assert xterm_color(67) == "#5f87af"  # cube: 16 + 36*1 + 6*2 + 3
    assert xterm_color(232) == "#080808" and xterm_color(255) == "#eeeeee"


def test_vars_resolve_through_chains():
    variables = {"primary": "base", "base": "#336699", "grey": 244, "loop": "loop2", "loop2": "loop"}
    assert parse_color("primary", variables) == "#336699"
    assert parse_color("grey", variables) == "#808080"
    with pytest.raises(ThemeError, match="unknown variable 'nope'"):
        parse_color("nope", variables)
    with pytest.raises(ThemeError, match="circular"):
        parse_color("loop", variables)


# --------------------------------------------------------------------------- mapping


def test_tokens_map_onto_fields():
    assert set(TOKEN_FIELDS) <= PI_TOKENS
    colours = {token: f"#0000{i:02x}" for i, token in enumerate(TOKEN_FIELDS)}
    theme, notes = theme_from_json(
        {"name": "all", "appearance": "dark", "colors": colours}, color_system="256"
    )
    assert notes == []
    for token, field in TOKEN_FIELDS.items():
        assert getattr(theme, field) == colours[token], token
    assert theme.user_bar == colours["accent"]
    assert (theme.name, theme.color_system, theme.code_theme) == ("all", "256", "monokai")


def test_missing_tokens_come_from_the_base_of_the_appearance():
    theme, _ = theme_from_json({"name": "x", "appearance": "light", "colors": {"accent": "#123456"}})
    light = builtin_theme("light")
    assert theme.accent == "#123456" and theme.user_bar == "#123456"
    assert theme.error == light.error and theme.user_bg == light.user_bg
    assert theme.code_theme == light.code_theme and theme.appearance == "light"


def test_appearance_detected_from_colours():
    pale = {"colors": {"userMessageBg": "#f0f0f0", "text": "#202020"}}
    deep = {"colors": {"userMessageBg": "#202030", "text": "#e0e0e0"}}
    assert theme_from_json(pale)[0].appearance == "light"
    assert theme_from_json(deep)[0].appearance == "dark"
    assert theme_from_json({"colors": {"accent": "#202020"}})[0].appearance == "light"
    assert theme_from_json({"colors": {}})[0].appearance == "dark"


def test_terminal_default_and_unknown_tokens():
    document = {"name": "t", "colors": {"text": "", "toolErrorBg": "", "acent": "#ff0000"}, "extra": 1}
    theme, notes = theme_from_json(document, color_system="truecolor")
    assert theme.text == "" and theme.tool_error_bg == ""
    assert theme.bg("tool_error_bg", "x") == "x"  # "" is the terminal's own background
    assert any("'acent'" in note for note in notes) and any("'extra'" in note for note in notes)


def test_pi_builtin_theme_files_load():
    folder = REPO / ".tools/pi/node_modules/@earendil-works/pi-coding-agent"
    folder = folder / "dist/modes/interactive/theme"
    if not folder.is_dir():
        pytest.skip("pi's reference install is not here")
    for stem in ("dark", "light"):
        theme, notes = theme_from_json(json.loads((folder / f"{stem}.json").read_text()))
        assert notes == [] and theme.appearance == stem and theme.accent.startswith("#")


def test_syntax_tokens_give_a_pygments_style():
    assert pygments_style(builtin_theme("dark")) is None
    theme, _ = theme_from_json({"colors": {"syntaxKeyword": "#aa0000", "syntaxString": 34}})
    style = pygments_style(theme)
    from pygments.token import Keyword, String

    assert style.style_for_token(Keyword)["color"] == "aa0000"
    assert style.style_for_token(String)["color"] == "00af00"


# --------------------------------------------------------------------------- the setting


def test_system_follows_the_background():
    assert load("system", {"agent_dir": "/nonexistent", "cwd": "/nonexistent"}, environ={})[0].name == "dark"
    cases = [
        ({"COLORFGBG": "0;15"}, "light"),
        ({"COLORFGBG": "15;0"}, "dark"),
        ({"COLORFGBG": "0;default;7"}, "light"),
    ]
    for environ, expected in cases:
        theme, warnings = load_theme(None, agent_dir="/x", cwd="/x", project_trusted=False, environ=environ)
        assert (theme.name, warnings) == (expected, [])
    theme, _ = load_theme(
        "system", agent_dir="/x", cwd="/x", project_trusted=False, background="light", environ={}
    )
    assert theme.name == "light"
    assert detect_background({"COLORFGBG": "15;8"}) == "dark"  # bright black (Solarized Dark)
    assert detect_background({"COLORFGBG": "default;default"}) is None
    assert detect_background({}) is None


def test_light_dark_pair(dirs):
    assert load("light/dark", dirs, background="light")[0].name == "light"
    assert load("light/dark", dirs, background="dark")[0].name == "dark"
    theme, warnings = load("a/b/c", dirs, background="light")
    assert theme.name == "light" and "light/dark" in warnings[0]


def test_builtin_by_name_and_colour_system(dirs):
    theme, warnings = load("light", dirs, environ={"NO_COLOR": "1", "COLORFGBG": "15;0"})
    assert (theme.name, theme.color_system, warnings) == ("light", None, [])
    assert theme.fg("error", "x") == "x"
    assert load("dark", dirs, environ={"TERM": "xterm-256color"})[0].color_system == "256"
    assert (
        load("dark", dirs, color_system="truecolor", environ={"NO_COLOR": "1"})[0].color_system == "truecolor"
    )


def test_user_theme_by_name_field_or_file_name(dirs):
    user_theme(dirs, "nord-file", {"name": "nord", "colors": {"accent": "#88c0d0"}})
    assert load("nord", dirs)[0].accent == "#88c0d0"
    assert load("nord-file", dirs)[0].accent == "#88c0d0"
    user_theme(dirs, "plain", {"colors": {"accent": "#010203"}})
    theme, warnings = load("plain", dirs)
    assert (theme.name, theme.accent, warnings) == ("plain", "#010203", [])


def test_project_wins_over_user_when_trusted(dirs):
    user_theme(dirs, "ocean", {"name": "ocean", "colors": {"accent": "#111111"}})
    project_theme(dirs, "other-file", {"name": "ocean", "colors": {"accent": "#222222"}})
    assert load("ocean", dirs, trusted=True)[0].accent == "#222222"
    assert load("ocean", dirs, trusted=False)[0].accent == "#111111"


def test_untrusted_project_themes_are_ignored(dirs):
    project_theme(dirs, "local", {"name": "local", "colors": {"accent": "#333333"}})
    theme, warnings = load("local", dirs, trusted=False, environ={"COLORFGBG": "0;15"})
    assert theme.name == "light" and "'local' not found" in warnings[0]
    assert "local" not in available_themes(dirs["agent_dir"], dirs["cwd"], False)
    assert "local" in available_themes(dirs["agent_dir"], dirs["cwd"], True)


def test_explicit_paths_come_first(dirs, tmp_path):
    extra = write(str(tmp_path), "given", {"name": "ocean", "colors": {"accent": "#444444"}})
    user_theme(dirs, "ocean", {"name": "ocean", "colors": {"accent": "#111111"}})
    assert load("ocean", dirs, paths=[str(extra)])[0].accent == "#444444"
    assert load("ocean", dirs, paths=[str(tmp_path)])[0].accent == "#444444"


@pytest.mark.parametrize(
    ("document", "problem"),
    [
        ("{not json", "bad JSON"),
        ({"name": "broken", "colors": {"accent": "nowhere"}}, "colors.accent: unknown variable 'nowhere'"),
        ({"name": "broken", "colors": {"error": "#12345"}}, "colors.error: bad colour '#12345'"),
        ({"name": "broken", "colors": {"error": 300}}, "colors.error: colour index 300"),
        ({"name": "broken", "vars": {"a": "b", "b": "a"}, "colors": {"accent": "a"}}, "circular"),
        ({"name": "broken", "colors": ["#fff"]}, 'no "colors" object'),
        ({"name": "broken", "appearance": "sepia", "colors": {}}, '"appearance"'),
        ({"name": "a/b", "colors": {}}, 'cannot contain "/"'),
        ([1, 2], "not a JSON object"),
    ],
)
def test_broken_file_warns_and_falls_back(dirs, document, problem):
    path = user_theme(dirs, "broken", document)
    theme, warnings = load("broken", dirs, environ={"COLORFGBG": "0;15", **TRUECOLOR})
    assert theme == builtin_theme("light", "truecolor")
    assert len(warnings) == 1 and str(path) in warnings[0] and problem in warnings[0], warnings
    assert "broken" not in available_themes(dirs["agent_dir"], dirs["cwd"], True)


def test_missing_theme_names_unreadable_files(dirs):
    user_theme(dirs, "garbled", "{")
    theme, warnings = load("somewhere", dirs)
    assert theme.name == "dark"
    assert warnings == [
        "theme 'somewhere' not found (unreadable theme files: garbled.json); using the built-in dark theme"
    ]


def test_missing_directories_are_fine(tmp_path):
    theme, warnings = load_theme(
        "x", agent_dir=str(tmp_path / "no"), cwd=str(tmp_path / "no"), project_trusted=True
    )
    assert theme.name in BUILTIN_THEMES and len(warnings) == 1
    assert available_themes(str(tmp_path / "no"), str(tmp_path / "no"), True) == ["system", "dark", "light"]


def test_available_themes(dirs):
    user_theme(dirs, "zeta", {"name": "Zeta", "colors": {}})
    user_theme(dirs, "alpha", {"name": "alpha", "colors": {}})
    user_theme(dirs, "dark", {"name": "dark", "colors": {}})  # a built-in's name: the built-in wins
    user_theme(dirs, "bad", {"name": "bad", "colors": {"accent": "missing"}})
    project_theme(dirs, "alpha2", {"name": "alpha", "colors": {}})
    project_theme(dirs, "mid", {"name": "mid", "colors": {}})
    assert available_themes(dirs["agent_dir"], dirs["cwd"], True) == [
        "system",
        "dark",
        "light",
        "alpha",
        "mid",
        "Zeta",
    ]
    assert load("dark", dirs)[0] == builtin_theme("dark", "truecolor")
