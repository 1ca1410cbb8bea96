"""The interactive interface: dialogs, ``!command`` input, switching sessions (reference §9.3)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NotRequired, TypedDict

from pi_host.plugins.hookspecs._marker import hookspec
from pi_host.plugins.rules import IGNORED, BadReturn, Rule, expect_dict, flag, returns

__all__ = [
    "on_session_before_fork",
    "on_session_before_switch",
    "on_ui_prompt_end",
    "on_ui_prompt_start",
    "on_user_bash",
]


if TYPE_CHECKING:  # payload types, for type checkers and readers (free at run time)

    class UiPromptEvent(TypedDict):
        reason: str
        """``ui_prompt``."""
        kind: str
        """``select``, ``confirm``, ``input`` or ``editor``."""
        title: NotRequired[str]


@hookspec
@returns(IGNORED)
def on_ui_prompt_start(event: UiPromptEvent, ctx: Any) -> None:
    """A dialog (``ctx.ui.select`` / ``confirm`` / ``input`` / ``editor``) waits for the user."""


@hookspec
@returns(IGNORED)
def on_ui_prompt_end(event: UiPromptEvent, ctx: Any) -> None:
    """The dialog was answered, dismissed or timed out."""


if TYPE_CHECKING:

    class UserBashEvent(TypedDict):
        command: str
        excludeFromContext: bool
        """``!!command``: the output is shown and stored, not sent to the model."""
        cwd: str

    class UserBashDecision(TypedDict, total=False):
        result: dict[str, Any]
        """``{output, exitCode?, cancelled?, truncated?}``: recorded without running the command."""
        operations: Any
        """A :class:`pi_host.lib.toolkit.Shell` to run the command with instead of this machine."""


def _check_bash(event: dict[str, Any], result: Any) -> Any:
    result = expect_dict(result)
    found = result.get("result")
    if found is not None and not (isinstance(found, dict) and isinstance(found.get("output", ""), str)):
        raise BadReturn("result must be {output, exitCode?}")
    operations = result.get("operations")
    if operations is not None and not callable(getattr(operations, "exec", None)):
        raise BadReturn("operations must be a Shell (with an exec method)")
    return result if found is not None or operations is not None else None


@hookspec
@returns(
    Rule(
        "the first result or operations wins; a raise blocks",
        check=_check_bash,
        stop=lambda result: True,
        raise_blocks=True,
    )
)
def on_user_bash(event: UserBashEvent, ctx: Any) -> UserBashDecision | None:
    """``!command`` / ``!!command`` typed in the editor, before it runs."""


if TYPE_CHECKING:

    class SessionBeforeSwitchEvent(TypedDict):
        reason: str
        """``new`` or ``resume``."""
        targetSessionFile: NotRequired[str]


@hookspec
@returns(Rule("a cancel stops the switch", check=lambda event, r: expect_dict(r), stop=flag("cancel")))
def on_session_before_switch(event: SessionBeforeSwitchEvent, ctx: Any) -> dict[str, Any] | None:
    """Before the session is replaced (``/new``, later ``/resume``): ``{"cancel": True}`` keeps it."""


if TYPE_CHECKING:

    class SessionBeforeForkEvent(TypedDict):
        entryId: str
        position: str
        """``before`` (``/fork``: the new file ends before this user message) or ``at``
        (``/clone``: it ends at this entry)."""


@hookspec
@returns(Rule("a cancel stops the fork", check=lambda event, r: expect_dict(r), stop=flag("cancel")))
def on_session_before_fork(event: SessionBeforeForkEvent, ctx: Any) -> dict[str, Any] | None:
    """Before ``/fork`` or ``/clone`` copies the branch into a new session file:
    ``{"cancel": True}`` keeps the current session."""
