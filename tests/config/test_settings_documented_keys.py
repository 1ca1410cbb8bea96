"""Every key of pi 1.6.0's settings reference is accepted with its documented values; only a wrong
type warns; ``modelThinkingLevels`` picks the start-up thinking level of ``pi -p``."""

from __future__ import annotations

import re

import pytest

from pi_host.config.settings import validate_settings
from tests.support.paths import REPO  # noqa: E402

SETTINGS_MD = REPO / ".tools/pi/node_modules/@earendil-works/pi-coding-agent/docs/settings.md"

# One documented value per key of pi 1.6.0's settings.md (dotted keys are nested objects).
DOCUMENTED = {
    "defaultProvider": "anthropic",
    "defaultModel": "claude-sonnet-4-5",
    "defaultThinkingLevel": "max",
    "modelThinkingLevels": {"anthropic/claude-sonnet-4-5": "high"},
    "thinkingBudgets": {"minimal": 512, "low": 1024, "medium": 4096, "high": 8192},
    "enabledModels": ["claude-*", "openai/gpt-5.2:high"],
    "hideThinkingBlock": True,
    "showCacheMissNotices": True,
    "cacheWarming": "streaming",
    "steeringMode": "all",
    "followUpMode": "one-at-a-time",
    "externalEditor": "vim",
    "doubleEscapeAction": "fork",
    "treeFilterMode": "labeled-only",
    "defaultProjectTrust": "never",
    "defaultTools": ["+codemode"],
    "codemode.mode": "only",
    "codemode.inlineBudget": 0,
    "sessionDir": ".sessions",
    "sessionShareDestination": "gist",
    "compaction.enabled": False,
    "compaction.reserveTokens": 16384,
    "compaction.keepRecentTokens": 20000,
    "compaction.modelOverrides": {"anthropic/claude-sonnet-4-5": {"reserveTokens": 1000}},
    "branchSummary.reserveTokens": 16384,
    "branchSummary.skipPrompt": True,
    "theme": "system",
    "quietStartup": "header",
    "tuiMode": "regular",
    "fullscreenExitOutput": "resume-hint",
    "fullscreenScrollbar": "hidden",
    "fullscreenCopyOnSelect": False,
    "fullscreenWheelScrollLines": "auto",
    "editorPaddingX": 3,
    "outputPad": 0,
    "autocompleteMaxVisible": 20,
    "showHardwareCursor": True,
    "terminal.showImages": False,
    "terminal.imageWidthCells": 60,
    "terminal.clearOnShrink": True,
    "terminal.showTerminalProgress": True,
    "terminal.hyperlinks": "auto",
    "terminal.images": False,
    "terminal.trueColor": True,
    "images.autoResize": False,
    "images.blockImages": True,
    "markdown.codeBlockIndent": "    ",
    "markdown.mermaid": "off",
    "transport": "websocket-cached",
    "httpProxy": "http://127.0.0.1:3128",
    "httpIdleTimeoutMs": "disabled",
    "websocketConnectTimeoutMs": "disabled",
    "retry.enabled": True,
    "retry.maxRetries": 3,
    "retry.baseDelayMs": 2000,
    "retry.maxAgentDelayMs": 60000,
    "retry.provider.timeoutMs": 300000,
    "retry.provider.maxRetries": 0,
    "retry.provider.maxRetryDelayMs": 0,
    "shellPath": "~/bin/bash",
    "shellCommandPrefix": "set -e",
    "npmCommand": ["pnpm"],
    "selfUpdateCommand": ["npm", "install", "-g", "{installSpec}"],
    "packages": ["npm:pi-example", {"source": "git:github.com/a/b"}],
    "extensions": ["./ext", "-builtin:mcp"],
    "skills": ["~/skills"],
    "prompts": ["!drafts/*"],
    "themes": ["+themes/dark.json"],
    "enableSkillCommands": False,
    "collapseChangelog": True,
    "enableInstallTelemetry": False,
    "enableAnalytics": True,
    "warnings.anthropicExtraUsage": False,
}


def nested(flat: dict) -> dict:
    out: dict = {}
    for dotted, value in flat.items():
        *parents, last = dotted.split(".")
        node = out
        for part in parents:
            node = node.setdefault(part, {})
        node[last] = value
    return out


def test_the_list_is_pi_s_documented_keys():
    if not SETTINGS_MD.is_file():
        pytest.skip("pi 1.6.0's docs are not installed")
    documented = set(re.findall(r"^\| `([A-Za-z.]+)` \|", SETTINGS_MD.read_text(), re.M))
    assert documented == set(DOCUMENTED)
    assert len(documented) == 73


def test_every_documented_key_and_value_is_accepted():
    data = nested(DOCUMENTED)
    cleaned, problems = validate_settings(data, "settings.json")
    assert problems == []
    assert cleaned == data
    for other in ({"httpIdleTimeoutMs": 0}, {"quietStartup": True}, {"fullscreenWheelScrollLines": 6}):
        assert validate_settings(other, "s.json") == (other, [])


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("quietStartup", "loud"),
        ("httpIdleTimeoutMs", "never"),
        ("tuiMode", "fancy"),
        ("terminal", {"images": True}),
        ("outputPad", 2),
        ("selfUpdateCommand", "npm i -g pi"),
        ("warnings", {"anthropicExtraUsage": "yes"}),
        ("showCacheMissNotices", 1),
    ],
)
def test_a_wrong_type_warns_and_is_ignored(key, value):
    cleaned, problems = validate_settings({key: value, "theme": "dark"}, "settings.json")
    assert len(problems) == 1 and problems[0].startswith(f"settings.json: {key}")
    assert cleaned == {"theme": "dark"} or cleaned.get(key) == {}
