"""Every key of pi 1.6.0's settings reference is accepted with its documented values; only a wrong
type warns; ``modelThinkingLevels`` picks the start-up thinking level of ``pi -p``."""

from __future__ import annotations

import json

import pytest

from tests.support.pi import run_pi
from tests.support.providers.recording import RecordingServer  # noqa: E402

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


@pytest.mark.parametrize("mode", ["print", "json"])
def test_documented_values_start_quietly_and_model_thinking_levels_apply(isolated_environment, mode):
    agent = isolated_environment["agent"]
    with RecordingServer() as server:
        compat = {
            "thinkingFormat": "chat-template",
            "chatTemplateKwargs": {"effort": {"$var": "thinking.effort"}},
        }
        provider = {
            "baseUrl": server.url + "/v1",
            "api": "openai-completions",
            "apiKey": "sk-loop",
            "compat": compat,
            "models": [{"id": "think-1", "reasoning": True}],
        }
        (agent / "models.json").write_text(json.dumps({"providers": {"loopt": provider}}))
        settings = {
            **nested(DOCUMENTED),
            "defaultThinkingLevel": "high",
            "modelThinkingLevels": {"loopt/think-1": "minimal"},
            "enabledModels": ["loopt/*"],
            "retry": {"enabled": False},
            "sessionDir": str(isolated_environment["work"] / "sessions"),
            "packages": [],
            "extensions": [],
            "skills": [],
            "prompts": [],
            "themes": [],
            "defaultTools": ["read"],
            "shellPath": "/bin/sh",
            "httpProxy": None,
        }
        del settings["httpProxy"]
        (agent / "settings.json").write_text(json.dumps(settings))
        mode_args = ["-p"] if mode == "print" else ["--mode", "json"]
        done = run_pi(*mode_args, "--no-session", "--model", "loopt/think-1", "hi")
        assert done.returncode == 0, done.stderr
        assert "settings.json" not in done.stderr
        assert server.chats()[0].json()["chat_template_kwargs"] == {"effort": "minimal"}
        # a level on the command line still wins
        done = run_pi(*mode_args, "--no-session", "--model", "loopt/think-1:low", "hi")
        assert done.returncode == 0, done.stderr
        assert server.chats()[1].json()["chat_template_kwargs"] == {"effort": "low"}
        # a wrong type is named on stderr, and the run goes on
        (agent / "settings.json").write_text(json.dumps({"quietStartup": "loud"}))
        done = run_pi(*mode_args, "--no-session", "--model", "loopt/think-1", "hi")
        assert done.returncode == 0, done.stderr
        assert "settings.json: quietStartup" in done.stderr
