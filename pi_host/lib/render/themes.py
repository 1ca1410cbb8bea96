"""Choosing the theme of the interactive mode: the ``theme`` setting, the built-in ``dark`` and
``light`` themes, and theme files in pi's JSON format.

The setting is ``system`` (the default: dark or light from the terminal's background), a theme's
name, or ``light/dark`` (a pair: the first name for a light terminal, the second for a dark one).
Theme files are looked up, first match wins, in the ``paths`` given (settings ``themes``, the
``--theme`` option), in ``<cwd>/.pi/themes/*.json`` when the project is trusted, in
``<agent-dir>/themes/*.json``, then in the themes packages ship (:func:`package_theme_paths`); a
file matches on its ``name`` field, else on its file name.

A file's colours (``colors``, resolving ``vars``) replace the built-in theme's where a pi token
corresponds to a field of :class:`~pi_host.lib.render.theme.Theme` (:data:`TOKEN_FIELDS`); other
tokens are taken from the built-in theme of the file's ``appearance`` (detected from its colours
when absent). Colours are ``#rgb``/``#rrggbb``, ``oklch(L C H)``, ``okhsl(H S L)``, an xterm
256-colour index, a variable's name, or ``""`` (the terminal's default). Nothing here raises on a
bad file: :func:`load_theme` reports it in one line and uses a built-in theme.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

from pi_host.lib.render.theme import BUILTIN_THEMES, Theme, builtin_theme, color_system_from_env

__all__ = [
    "PI_TOKENS",
    "SYSTEM",
    "TOKEN_FIELDS",
    "ThemeError",
    "available_themes",
    "detect_background",
    "package_theme_paths",
    "load_theme",
    "parse_color",
    "pygments_style",
    "theme_from_json",
    "xterm_color",
]

SYSTEM = "system"
"""The default setting: the built-in theme matching the terminal's background."""

TOKEN_FIELDS: dict[str, str] = {
    "accent": "accent",
    "border": "border",
    "success": "success",
    "error": "error",
    "warning": "warning",
    "muted": "muted",
    "dim": "dim",
    "text": "text",
    "thinkingText": "thinking",
    "userMessageBg": "user_bg",
    "toolPendingBg": "tool_pending_bg",
    "toolSuccessBg": "tool_success_bg",
    "toolErrorBg": "tool_error_bg",
    "toolTitle": "tool_title",
    "toolDiffAdded": "diff_added",
    "toolDiffRemoved": "diff_removed",
    "toolDiffContext": "diff_context",
    "mdHeading": "heading",
    "mdLink": "link",
    "mdCode": "inline_code",
    "mdQuote": "quote",
}
"""pi's colour tokens that set a :class:`Theme` field (``user_bar`` follows ``accent``)."""

_SYNTAX_TOKENS = (
    "syntaxComment",
    "syntaxKeyword",
    "syntaxFunction",
    "syntaxVariable",
    "syntaxString",
    "syntaxNumber",
    "syntaxType",
    "syntaxOperator",
    "syntaxPunctuation",
)
_BACKGROUND_TOKENS = frozenset(
    {
        "selectedBg",
        "searchMatchBg",
        "userMessageBg",
        "customMessageBg",
        "toolPendingBg",
        "toolSuccessBg",
        "toolErrorBg",
    }
)
_OTHER_TOKENS = (
    "borderAccent borderMuted scrollbarTrack scrollbarThumb searchMatchText userMessageText "
    "customMessageText customMessageLabel toolOutput mdLinkUrl mdCodeBlock mdCodeBlockBorder "
    "mdQuoteBorder mdHr mdListBullet thinkingOff thinkingMinimal thinkingLow thinkingMedium "
    "thinkingHigh thinkingXhigh thinkingMax bashMode"
).split()
PI_TOKENS: frozenset[str] = frozenset({*TOKEN_FIELDS, *_SYNTAX_TOKENS, *_BACKGROUND_TOKENS, *_OTHER_TOKENS})
"""Every token of pi's theme schema: these are accepted; any other is reported and ignored."""

_TOP_LEVEL = frozenset({"$schema", "name", "appearance", "vars", "colors", "export"})


class ThemeError(ValueError):
    """A theme file that cannot be used (the message says why, without the file's name)."""


# --------------------------------------------------------------------------- colours

_NUMBER = r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?"
_HEX_RE = re.compile(r"#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})")
_OKLCH_RE = re.compile(rf"oklch\(\s*({_NUMBER})(%)?\s+({_NUMBER})\s+({_NUMBER})(?:deg)?\s*\)", re.I)
_OKHSL_RE = re.compile(rf"okhsl\(\s*({_NUMBER})(?:deg)?\s+({_NUMBER})(%)?\s+({_NUMBER})(%)?\s*\)", re.I)
_ANSI16 = (
    "#000000 #cd0000 #00cd00 #cdcd00 #0000ee #cd00cd #00cdcd #e5e5e5 "
    "#7f7f7f #ff0000 #00ff00 #ffff00 #5c5cff #ff00ff #00ffff #ffffff"
).split()
_CUBE = (0, 95, 135, 175, 215, 255)


def xterm_color(index: int) -> str:
    """``#rrggbb`` of xterm's colour ``index`` (0-255: 16 system colours, 6x6x6 cube, grey ramp)."""
    if not 0 <= index <= 255:
        raise ThemeError(f"colour index {index} is not in 0-255")
    if index < 16:
        return _ANSI16[index]
    if index < 232:
        i = index - 16
        return _hex(_CUBE[i // 36] / 255, _CUBE[i // 6 % 6] / 255, _CUBE[i % 6] / 255)
    level = (8 + 10 * (index - 232)) / 255
    return _hex(level, level, level)


def parse_color(value: Any, variables: Mapping[str, Any] | None = None) -> str:
    """``#rrggbb`` (or ``""``, the terminal's default) of a theme colour value: a hex, OKLCH or
    OKHSL string, a 256-colour index, or the name of an entry of ``variables`` (which may name
    another). Raises :class:`ThemeError` for anything else."""
    return _resolve(value, variables or {}, ())


def _resolve(value: Any, variables: Mapping[str, Any], seen: tuple[str, ...]) -> str:
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise ThemeError(f"{value!r} is not a colour (a string or an index 0-255)")
    if isinstance(value, int):
        return xterm_color(value)
    text = value.strip()
    if text == "":
        return ""
    if text.startswith("#"):
        if not _HEX_RE.fullmatch(text):
            raise ThemeError(f"bad colour {value!r}")
        digits = text[1:].lower()
        return "#" + ("".join(c * 2 for c in digits) if len(digits) == 3 else digits)
    if text[:5].lower() == "oklch":
        match = _OKLCH_RE.fullmatch(text)
        if not match:
            raise ThemeError(f"bad colour {value!r}")
        lightness = float(match[1]) / (100 if match[2] else 1)
        return _oklch_hex(lightness, float(match[3]), float(match[4]))
    if text[:5].lower() == "okhsl":
        match = _OKHSL_RE.fullmatch(text)
        if not match:
            raise ThemeError(f"bad colour {value!r}")
        saturation = float(match[2]) / (100 if match[3] else 1)
        lightness = float(match[4]) / (100 if match[5] else 1)
        return _okhsl_hex(float(match[1]), saturation, lightness)
    if text in seen:
        raise ThemeError(f"circular variable reference {' -> '.join((*seen, text))}")
    if text not in variables:
        raise ThemeError(f"unknown variable {text!r}")
    return _resolve(variables[text], variables, (*seen, text))


def _hex(r: float, g: float, b: float) -> str:
    return "#" + "".join(f"{round(min(1.0, max(0.0, c)) * 255):02x}" for c in (r, g, b))


def _encode(c: float) -> float:
    """Linear light to the sRGB transfer curve."""
    return 12.92 * c if c <= 0.0031308 else 1.055 * c ** (1 / 2.4) - 0.055


def _decode(c: float) -> float:
    return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4


# OKLab (Björn Ottosson, 2020): LMS cone responses of linear sRGB, cube-rooted, then mixed.
_LAB_TO_LMS = ((0.3963377774, 0.2158037573), (-0.1055613458, -0.0638541728), (-0.0894841775, -1.2914855480))
_LMS_TO_RGB = (
    (4.0767416621, -3.3077115913, 0.2309699292),
    (-1.2684380046, 2.6097574011, -0.3413193965),
    (-0.0041960863, -0.7034186147, 1.7076147010),
)


def _oklab_to_linear(lightness: float, a: float, b: float) -> tuple[float, float, float]:
    lms = [(lightness + ka * a + kb * b) ** 3 for ka, kb in _LAB_TO_LMS]
    r, g, b_ = (sum(w * c for w, c in zip(row, lms, strict=True)) for row in _LMS_TO_RGB)
    return r, g, b_


def _oklab_lightness(hex_colour: str) -> float:
    """OKLab lightness (0 black to 1 white) of ``#rrggbb``."""
    r, g, b = (_decode(int(hex_colour[i : i + 2], 16) / 255) for i in (1, 3, 5))
    lms = (
        0.4122214708 * r + 0.5363325363 * g + 0.0514459929 * b,
        0.2119034982 * r + 0.6806995451 * g + 0.1073969566 * b,
        0.0883024619 * r + 0.2817188376 * g + 0.6299787005 * b,
    )
    cubes = [math.copysign(abs(c) ** (1 / 3), c) for c in lms]
    return 0.2104542553 * cubes[0] + 0.7936177850 * cubes[1] - 0.0040720468 * cubes[2]


def _oklch_hex(lightness: float, chroma: float, hue: float) -> str:
    """An OKLCH colour, its chroma reduced (same lightness and hue) until it fits sRGB."""
    lightness = min(1.0, max(0.0, lightness))
    cos_h, sin_h = math.cos(math.radians(hue)), math.sin(math.radians(hue))

    def rgb(c: float) -> tuple[float, float, float]:
        return _oklab_to_linear(lightness, c * cos_h, c * sin_h)

    def fits(c: float) -> bool:
        return all(-1e-6 <= v <= 1 + 1e-6 for v in rgb(c))

    chroma = max(0.0, chroma)
    if not fits(chroma):
        low, high = 0.0, chroma
        for _ in range(30):
            middle = (low + high) / 2
            low, high = (middle, high) if fits(middle) else (low, middle)
        chroma = low
    return _hex(*(_encode(min(1.0, max(0.0, v))) for v in rgb(chroma)))


# OKHSL (Ottosson): saturation 0-1 is relative to the most chroma sRGB allows at that lightness and
# hue; lightness runs through a "toe" so equal steps look equal.
_TOE_K1, _TOE_K2 = 0.206, 0.03
_TOE_K3 = (1 + _TOE_K1) / (1 + _TOE_K2)


def _toe_inv(x: float) -> float:
    return (x * x + _TOE_K1 * x) / (_TOE_K3 * (x + _TOE_K2))


def _lms_slopes(a: float, b: float) -> list[float]:
    return [ka * a + kb * b for ka, kb in _LAB_TO_LMS]


def _max_saturation(a: float, b: float) -> float:
    """The saturation (chroma / lightness) where hue ``(a, b)`` (unit vector) leaves sRGB: a
    polynomial guess for the channel that clips first, refined by one Halley step."""
    if -1.88170328 * a - 0.80936493 * b > 1:
        k, weights = (1.19086277, 1.76576728, 0.59662641, 0.75515197, 0.56771245), _LMS_TO_RGB[0]
    elif 1.81444104 * a - 1.19445276 * b > 1:
        k, weights = (0.73956515, -0.45954404, 0.08285427, 0.12541070, 0.14503204), _LMS_TO_RGB[1]
    else:
        k, weights = (1.35733652, -0.00915799, -1.15130210, -0.50559606, 0.00692167), _LMS_TO_RGB[2]
    s = k[0] + k[1] * a + k[2] * b + k[3] * a * a + k[4] * a * b
    slopes = _lms_slopes(a, b)
    roots = [1 + s * m for m in slopes]
    f0 = sum(w * r**3 for w, r in zip(weights, roots, strict=True))
    f1 = sum(w * 3 * m * r * r for w, m, r in zip(weights, slopes, roots, strict=True))
    f2 = sum(w * 6 * m * m * r for w, m, r in zip(weights, slopes, roots, strict=True))
    return s - f0 * f1 / (f1 * f1 - 0.5 * f0 * f2)


def _cusp(a: float, b: float) -> tuple[float, float]:
    """Lightness and chroma of the most colourful sRGB colour of hue ``(a, b)``."""
    s = _max_saturation(a, b)
    peak = max(_oklab_to_linear(1, s * a, s * b))
    lightness = (1 / peak) ** (1 / 3)
    return lightness, lightness * s


def _max_chroma(a: float, b: float, lightness: float, cusp: tuple[float, float]) -> float:
    """The largest in-gamut chroma at ``lightness`` along hue ``(a, b)``."""
    cusp_l, cusp_c = cusp
    if lightness <= cusp_l:
        return cusp_c * lightness / cusp_l
    t = cusp_c * (lightness - 1) / (cusp_l - 1)
    # Below the cusp the boundary is a straight line; above it, refine the line's guess toward the
    # curved boundary with one Halley step per channel and take the nearest channel that clips.
    slopes = _lms_slopes(a, b)
    roots = [lightness + t * m for m in slopes]
    best = math.inf
    for weights in _LMS_TO_RGB:
        f0 = sum(w * r**3 for w, r in zip(weights, roots, strict=True)) - 1
        f1 = sum(w * 3 * m * r * r for w, m, r in zip(weights, slopes, roots, strict=True))
        f2 = sum(w * 6 * m * m * r for w, m, r in zip(weights, slopes, roots, strict=True))
        u = f1 / (f1 * f1 - 0.5 * f0 * f2)
        if u >= 0:
            best = min(best, -f0 * u)
    return t + (best if best != math.inf else 0.0)


def _okhsl_hex(hue: float, saturation: float, lightness: float) -> str:
    saturation, lightness = min(1.0, max(0.0, saturation)), min(1.0, max(0.0, lightness))
    if lightness >= 1:
        return "#ffffff"
    if lightness <= 0:
        return "#000000"
    a, b = math.cos(math.radians(hue)), math.sin(math.radians(hue))
    lab_l = _toe_inv(lightness)
    cusp = _cusp(a, b)
    c_max = _max_chroma(a, b, lab_l, cusp)
    # Chroma at the three reference points: a hue-independent low chroma, a "mid" one from a fitted
    # approximation of the gamut's shape, and the gamut edge; saturation runs through them smoothly.
    cusp_l, cusp_c = cusp
    scale = c_max / min(lab_l * cusp_c / cusp_l, (1 - lab_l) * cusp_c / (1 - cusp_l))
    s_mid = 0.11516993 + 1 / (
        7.44778970
        + 4.15901240 * b
        + a
        * (
            -2.19557347
            + 1.75198401 * b
            + a * (-2.13704948 - 10.02301043 * b + a * (-4.24894561 + 5.38770819 * b + 4.69891013 * a))
        )
    )
    t_mid = 0.11239642 + 1 / (
        1.61320320
        - 0.68124379 * b
        + a
        * (
            0.40370612
            + 0.90148123 * b
            + a * (-0.27087943 + 0.61223990 * b + a * (0.00299215 - 0.45399568 * b - 0.14661872 * a))
        )
    )
    c_mid = 0.9 * scale * (1 / ((lab_l * s_mid) ** -4 + ((1 - lab_l) * t_mid) ** -4)) ** 0.25
    c_0 = (1 / ((lab_l * 0.4) ** -2 + ((1 - lab_l) * 0.8) ** -2)) ** 0.5
    if saturation < 0.8:
        t = saturation / 0.8
        k1 = 0.8 * c_0
        k2 = 1 - k1 / c_mid
        chroma = t * k1 / (1 - k2 * t)
    else:
        t = (saturation - 0.8) / 0.2
        k1 = 0.2 * c_mid * c_mid / (0.8 * 0.8 * c_0)
        k2 = 1 - k1 / (c_max - c_mid)
        chroma = c_mid + t * k1 / (1 - k2 * t)
    rgb = _oklab_to_linear(lab_l, chroma * a, chroma * b)
    return _hex(*(_encode(min(1.0, max(0.0, v))) for v in rgb))


# --------------------------------------------------------------------------- theme files


def theme_from_json(
    data: Any, *, name: str | None = None, color_system: str | None | bool = True
) -> tuple[Theme, list[str]]:
    """The :class:`Theme` of a parsed pi theme document, and notes on what was ignored (unknown
    tokens or top-level keys). Raises :class:`ThemeError` when the document cannot be used."""
    if not isinstance(data, dict):
        raise ThemeError("not a JSON object")
    colors, variables = data.get("colors"), data.get("vars", {})
    if not isinstance(colors, dict):
        raise ThemeError('no "colors" object')
    if not isinstance(variables, dict):
        raise ThemeError('"vars" is not an object')
    appearance = data.get("appearance")
    if appearance is not None and appearance not in BUILTIN_THEMES:
        raise ThemeError(f'"appearance" must be "dark" or "light", not {appearance!r}')
    notes = [f"unknown key {key!r} ignored" for key in data if key not in _TOP_LEVEL]
    resolved: dict[str, str] = {}
    for token, value in colors.items():
        if token not in PI_TOKENS:
            notes.append(f"unknown colour token {token!r} ignored")
            continue
        try:
            resolved[token] = _resolve(value, variables, ())
        except ThemeError as exc:
            raise ThemeError(f"colors.{token}: {exc}") from None
    appearance = appearance or _detect_appearance(resolved)
    base = builtin_theme(appearance, color_system)
    values = {TOKEN_FIELDS[token]: colour for token, colour in resolved.items() if token in TOKEN_FIELDS}
    if "accent" in resolved:
        values["user_bar"] = resolved["accent"]
    syntax = tuple((token, resolved[token]) for token in _SYNTAX_TOKENS if resolved.get(token))
    title = name or data.get("name") or "custom"
    return replace(base, **values, name=str(title), appearance=appearance, syntax=syntax), notes


def _detect_appearance(resolved: Mapping[str, str]) -> str:
    """``light`` when the theme's backgrounds are lighter than its text (or, without backgrounds,
    when its text is dark), else ``dark``."""
    backs = [_oklab_lightness(c) for t, c in resolved.items() if c and t in _BACKGROUND_TOKENS]
    fores = [_oklab_lightness(c) for t, c in resolved.items() if c and t not in _BACKGROUND_TOKENS]
    back = sum(backs) / len(backs) if backs else None
    fore = sum(fores) / len(fores) if fores else None
    if back is not None:
        return "light" if back > (fore if fore is not None else 0.5) else "dark"
    return "light" if fore is not None and fore < 0.5 else "dark"


@dataclass
class _File:
    path: Path
    name: str
    """The ``name`` field, else the file name without ``.json``."""
    data: Any = None
    error: str | None = None


def package_theme_paths(agent_dir: str, cwd: str, project_trusted: bool, host: Any = None) -> list[str]:
    """The theme files and folders packages ship (``register_resources`` of the plugins ``host``
    loaded, else of the last plugins loaded in this process; ``packages`` settings' pi-package
    folders), narrowed by the ``packages`` filters."""
    from pi_host.lib.resources import package_resources
    from pi_host.plugins.selection import last_loaded

    host = host if host is not None else last_loaded()
    return [r.path for r in package_resources("themes", host, agent_dir, cwd, project_trusted)]


def _theme_files(
    agent_dir: str, cwd: str, project_trusted: bool, paths: Sequence[str], packages: Sequence[str] | None
) -> list[_File]:
    """Theme files in the order they take precedence: ``paths``, the trusted project's, the
    user's, then the packages' (None: :func:`package_theme_paths`)."""
    sources = [Path(cwd, p) for p in paths]
    if project_trusted:
        sources.append(Path(cwd, ".pi", "themes"))
    sources.append(Path(agent_dir, "themes"))
    if packages is None:
        packages = package_theme_paths(agent_dir, cwd, project_trusted)
    sources.extend(Path(p) for p in packages)
    found: list[_File] = []
    for source in sources:
        try:
            if source.is_dir():
                files = sorted(p for p in source.iterdir() if p.suffix == ".json" and p.is_file())
            else:
                files = [source] if source.is_file() else []
        except OSError:
            continue
        found.extend(_read(path) for path in files)
    return found


def _read(path: Path) -> _File:
    try:
        data = json.loads(path.read_text(encoding="utf-8-sig"))
    except OSError as exc:
        return _File(path, path.stem, error=f"cannot read it ({exc.strerror or exc})")
    except (ValueError, UnicodeDecodeError) as exc:
        return _File(path, path.stem, error=f"bad JSON ({exc})")
    name = data.get("name") if isinstance(data, dict) else None
    if name is not None and (not isinstance(name, str) or not name.strip()):
        return _File(path, path.stem, error='"name" is not a non-empty string')
    if isinstance(name, str) and "/" in name:
        return _File(path, path.stem, error=f'theme names cannot contain "/" ({name!r})')
    return _File(path, (name or path.stem).strip(), data)


def _find(files: list[_File], name: str) -> _File | None:
    for entry in files:
        if entry.error is None and entry.name == name:
            return entry
    return next((entry for entry in files if entry.path.stem == name), None)


def detect_background(environ: Mapping[str, str] | None = None) -> str | None:
    """``dark`` or ``light`` from ``COLORFGBG`` (``fg;bg`` or ``fg;x;bg``; the background's
    ANSI index 0-6 or 8 is dark, 7 or 9-15 light), None when it does not say."""
    env = os.environ if environ is None else environ
    field = env.get("COLORFGBG", "").split(";")[-1].strip()
    if not (field.isascii() and field.isdigit()) or int(field) > 15:
        return None
    return "dark" if int(field) <= 6 or int(field) == 8 else "light"


def load_theme(
    name: str | None,
    *,
    agent_dir: str,
    cwd: str,
    project_trusted: bool,
    background: str | None = None,
    paths: Sequence[str] = (),
    color_system: str | None | bool = True,
    environ: Mapping[str, str] | None = None,
    packages: Sequence[str] | None = None,
) -> tuple[Theme, list[str]]:
    """The theme the ``theme`` setting ``name`` names, and one-line warnings about it.

    ``background`` is the terminal's (``dark``/``light``) when the caller detected it; else
    ``COLORFGBG`` decides, else dark. It picks the theme of ``system`` (and of None) and of a
    ``light/dark`` pair. A missing or broken theme gives a warning and the built-in theme for
    that background; this never raises. ``paths`` (theme files or folders, relative to ``cwd``)
    are searched before the project's and the user's folders, ``packages`` (theme paths of
    packages; None: :func:`package_theme_paths`) after them. ``color_system`` is as for
    :func:`~pi_host.lib.render.theme.default_theme` (True: from the environment, which
    ``environ`` replaces when given).
    """
    env = os.environ if environ is None else environ
    system = color_system_from_env(dict(env)) if color_system is True else color_system or None
    shade = background if background in BUILTIN_THEMES else detect_background(env) or "dark"
    fallback = builtin_theme(shade, system)
    using = f"; using the built-in {shade} theme"
    if name is not None and not isinstance(name, str):
        return fallback, [f"theme setting {name!r} is not a name{using}"]
    setting = (name or "").strip()
    if "/" in setting:
        pair = [part.strip() for part in setting.split("/")]
        if len(pair) != 2 or not all(pair):
            return fallback, [f"theme setting {setting!r}: expected two names, light/dark{using}"]
        setting = pair[0] if shade == "light" else pair[1]
    if not setting or setting == SYSTEM:
        return fallback, []
    if setting in BUILTIN_THEMES:
        return builtin_theme(setting, system), []
    files = _theme_files(agent_dir, cwd, project_trusted, paths, packages)
    entry = _find(files, setting)
    if entry is None:
        unreadable = [f.path.name for f in files if f.error]
        extra = f" (unreadable theme files: {', '.join(unreadable)})" if unreadable else ""
        return fallback, [f"theme {setting!r} not found{extra}{using}"]
    if entry.error:
        return fallback, [f"theme file {entry.path}: {entry.error}{using}"]
    try:
        theme, notes = theme_from_json(entry.data, name=entry.name, color_system=system)
    except ThemeError as exc:
        return fallback, [f"theme file {entry.path}: {exc}{using}"]
    except Exception as exc:  # a file must never stop the app: colour math on odd numbers...
        return fallback, [f"theme file {entry.path}: unusable ({exc}){using}"]
    return theme, [f"theme file {entry.path}: {note}" for note in notes]


def available_themes(
    agent_dir: str,
    cwd: str,
    project_trusted: bool,
    *,
    paths: Sequence[str] = (),
    packages: Sequence[str] | None = None,
) -> list[str]:
    """Theme names for a picker: ``system``, the built-ins, then the usable theme files' names
    (alphabetically; a broken file, or one reusing a built-in's name, is left out)."""
    names: dict[str, None] = {}
    for entry in _theme_files(agent_dir, cwd, project_trusted, paths, packages):
        if entry.error or entry.name in names or entry.name in (SYSTEM, *BUILTIN_THEMES):
            continue
        try:
            theme_from_json(entry.data, name=entry.name, color_system=None)
        except Exception:
            continue
        names[entry.name] = None
    return [SYSTEM, *BUILTIN_THEMES, *sorted(names, key=lambda n: (n.casefold(), n))]


# --------------------------------------------------------------------------- code colours

_PYGMENTS_TOKENS = {
    "syntaxComment": ("Comment",),
    "syntaxKeyword": ("Keyword",),
    "syntaxFunction": ("Name.Function",),
    "syntaxVariable": ("Name.Variable", "Name.Attribute"),
    "syntaxString": ("String",),
    "syntaxNumber": ("Number",),
    "syntaxType": ("Keyword.Type", "Name.Class", "Name.Builtin"),
    "syntaxOperator": ("Operator",),
    "syntaxPunctuation": ("Punctuation",),
}


def pygments_style(theme: Theme) -> type | None:
    """A pygments style class of the theme file's ``syntax*`` colours (None when it has none):
    rich's ``Syntax`` and ``Markdown(code_theme=...)`` accept it in place of a style name. Plain
    code takes the theme's ``text`` colour (a light or dark grey when that is the terminal's)."""
    if not theme.syntax:
        return None
    plain = theme.text or ("#d4d4d4" if theme.appearance == "dark" else "#303030")
    return _style_class(theme.syntax, plain)


@lru_cache(maxsize=8)
def _style_class(syntax: tuple[tuple[str, str], ...], plain: str) -> type:
    from pygments.style import Style
    from pygments.token import Token, string_to_tokentype

    # rich draws a token the style leaves uncoloured in black: give plain code a colour.
    styles = {Token: plain}
    for token, colour in syntax:
        for kind in _PYGMENTS_TOKENS.get(token, ()):
            styles[string_to_tokentype(kind)] = colour
    return type("PiThemeStyle", (Style,), {"styles": styles, "background_color": "default"})
