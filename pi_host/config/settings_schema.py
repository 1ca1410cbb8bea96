"""The shape of settings.json (reference §8.6), as pydantic models.

Every documented key is typed here so a wrong value is caught with its file and key. Unknown keys
are allowed (``extra="allow"``): pi itself, other programs and future versions write keys pi-host
does not know, and those must survive untouched. Defaults are *not* filled in here; readers ask
:func:`pi_host.config.settings.get` with their own default, so a merged dict only ever holds what a file
actually said. The ``*Section`` models only check a file's section; the effective values a
feature uses are resolved where it is implemented (``CompactionSettings`` in
:mod:`pi_host.lib.compaction.config`).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

ThinkingLevel = Literal["off", "minimal", "low", "medium", "high", "xhigh", "max"]
QueueMode = Literal["all", "one-at-a-time"]
NonNegInt = Annotated[int, Field(ge=0, strict=True)]
ResourceList = list[str | dict[str, Any]]
"""Resource entries: paths or globs (``!glob``, ``+path``, ``-path``), or package objects."""


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow", strict=True)


class ModelCompactionOverride(_Open):
    reserveTokens: NonNegInt | None = None
    keepRecentTokens: NonNegInt | None = None


class CompactionSection(_Open):
    enabled: bool | None = None
    reserveTokens: NonNegInt | None = None
    keepRecentTokens: NonNegInt | None = None
    modelOverrides: dict[str, ModelCompactionOverride] | None = None
    strategy: str | None = None


class BranchSummarySection(_Open):
    reserveTokens: NonNegInt | None = None
    skipPrompt: bool | None = None


class ProviderRetrySection(_Open):
    maxRetries: NonNegInt | None = None
    maxRetryDelayMs: NonNegInt | None = None
    timeoutMs: NonNegInt | None = None


class RetrySection(_Open):
    enabled: bool | None = None
    maxRetries: NonNegInt | None = None
    baseDelayMs: NonNegInt | None = None
    maxAgentDelayMs: NonNegInt | None = None
    maxDelayMs: NonNegInt | None = None
    provider: ProviderRetrySection | None = None


class ImageSection(_Open):
    autoResize: bool | None = None
    blockImages: bool | None = None


class ThinkingBudgets(_Open):
    minimal: NonNegInt | None = None
    low: NonNegInt | None = None
    medium: NonNegInt | None = None
    high: NonNegInt | None = None
    xhigh: NonNegInt | None = None
    max: NonNegInt | None = None


class CodemodeSection(_Open):
    mode: Literal["on", "only"] | None = None
    inlineBudget: NonNegInt | None = None


class TerminalSection(_Open):
    showImages: bool | None = None
    imageWidthCells: NonNegInt | None = None
    clearOnShrink: bool | None = None
    showTerminalProgress: bool | None = None
    hyperlinks: bool | Literal["auto"] | None = None
    images: Literal["kitty", "iterm2", "auto", False] | None = None
    trueColor: bool | Literal["auto"] | None = None


class MarkdownSection(_Open):
    codeBlockIndent: str | None = None
    mermaid: Literal["off", "final", "streaming"] | None = None


class WarningsSection(_Open):
    anthropicExtraUsage: bool | None = None


class BudgetsSection(_Open):
    """Caps checked before each provider request (``--max-turns`` and friends win over these)."""

    maxTurns: NonNegInt | None = None
    maxCost: float | None = None
    maxTokens: NonNegInt | None = None
    maxTime: float | str | None = None
    """Seconds, or ``"90s"``, ``"5m"``, ``"1h"``."""


Disableable = NonNegInt | Literal["disabled"]
"""Milliseconds, with ``0`` or ``"disabled"`` for no limit."""


class Settings(_Open):
    """One settings.json file. Every field is optional; ``None`` means "not set in this file"."""

    # models and thinking
    defaultProvider: str | None = None
    defaultModel: str | None = None
    defaultThinkingLevel: ThinkingLevel | None = None
    modelThinkingLevels: dict[str, ThinkingLevel] | None = None
    thinkingBudgets: ThinkingBudgets | None = None
    enabledModels: list[str] | None = None
    showCacheMissNotices: bool | None = None
    # queues and tools
    steeringMode: QueueMode | None = None
    followUpMode: QueueMode | None = None
    defaultTools: list[str] | None = None
    toolExecution: Literal["parallel", "sequential"] | None = None
    codemode: CodemodeSection | None = None
    # sessions, compaction, retries
    sessionDir: str | None = None
    sessionStore: str | None = None
    sessionShareDestination: Literal["auto", "gist", "radius"] | None = None
    compaction: CompactionSection | None = None
    branchSummary: BranchSummarySection | None = None
    retry: RetrySection | None = None
    # transport and shell
    transport: Literal["auto", "sse", "websocket", "websocket-cached"] | None = None
    httpIdleTimeoutMs: Disableable | None = None
    websocketConnectTimeoutMs: Disableable | None = None
    httpProxy: str | None = None
    shellPath: str | None = None
    shellCommandPrefix: str | None = None
    selfUpdateCommand: list[str] | None = None
    # pi-host's own keys (pi keeps unknown keys, so they survive pi writing the file)
    budgets: BudgetsSection | None = None
    shellOutputLogMaxBytes: NonNegInt | None = None
    """Cap of the bash tool's full-output log file (0: no cap)."""
    shellScrubProviderKeys: bool | None = None
    """Remove the configured providers' key variables from the bash tool's environment."""
    pluginHookTimeoutMs: NonNegInt | None = None
    """How long one plugin hook may run before it is reported and skipped (0: no limit)."""
    npmCommand: list[str] | None = None
    images: ImageSection | None = None
    # resources
    packages: ResourceList | None = None
    extensions: ResourceList | None = None
    skills: ResourceList | None = None
    prompts: ResourceList | None = None
    themes: ResourceList | None = None
    enableSkillCommands: bool | None = None
    disabledPlugins: list[str] | None = None
    # trust and UI
    defaultProjectTrust: Literal["ask", "always", "never"] | None = None
    cacheWarming: Literal["off", "streaming", "idle"] | None = None
    doubleEscapeAction: Literal["tree", "fork", "none"] | None = None
    hideThinkingBlock: bool | None = None
    theme: str | None = None
    quietStartup: bool | Literal["header"] | None = None
    externalEditor: str | None = None
    treeFilterMode: Literal["default", "no-tools", "user-only", "labeled-only", "all"] | None = None
    tuiMode: Literal["regular", "fullscreen"] | None = None
    fullscreenExitOutput: Literal["transcript", "resume-hint"] | None = None
    fullscreenScrollbar: Literal["auto", "always", "hidden"] | None = None
    fullscreenCopyOnSelect: bool | None = None
    fullscreenWheelScrollLines: Literal["auto"] | Annotated[int, Field(ge=1, le=100, strict=True)] | None = (
        None
    )
    editorPaddingX: Annotated[int, Field(ge=0, le=3, strict=True)] | None = None
    outputPad: Literal[0, 1] | None = None
    autocompleteMaxVisible: Annotated[int, Field(ge=3, le=20, strict=True)] | None = None
    showHardwareCursor: bool | None = None
    terminal: TerminalSection | None = None
    markdown: MarkdownSection | None = None
    # updates, telemetry and warnings
    collapseChangelog: bool | None = None
    enableInstallTelemetry: bool | None = None
    enableAnalytics: bool | None = None
    warnings: WarningsSection | None = None


# Re-exported: the defaults live in a module without pydantic.
from pi_host.config.defaults import DEFAULTS, RESOURCE_KEYS, USER_ONLY_KEYS  # noqa: E402, F401
