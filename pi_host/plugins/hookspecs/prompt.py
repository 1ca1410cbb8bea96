"""From input to a run: the ``input`` pipeline and ``before_agent_start`` (reference §4.2)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NotRequired, TypedDict

from pi_host.plugins.hookspecs._marker import hookspec
from pi_host.plugins.rules import BadReturn, Rule, expect_dict, returns

__all__ = ["on_before_agent_start", "on_input"]


if TYPE_CHECKING:  # payload types, for type checkers and readers (free at run time)

    class InputEvent(TypedDict):
        text: str
        images: list[Any] | None
        source: str
        """``interactive``, ``rpc``, ``extension``, ``print``, ``json`` or ``sdk``."""
        streamingBehavior: NotRequired[str]

    class InputResult(TypedDict):
        action: str
        """``continue``, ``transform`` (with ``text``, ``images?``) or ``handled`` (the prompt ends)."""
        text: NotRequired[str]
        images: NotRequired[list[Any]]


def _check_input(event: dict[str, Any], result: Any) -> InputResult:
    result = expect_dict(result)
    action = result.get("action")
    if action not in ("continue", "transform", "handled"):
        raise BadReturn(f'action must be "continue", "transform" or "handled", got {action!r}')
    if action == "transform" and not isinstance(result.get("text", event["text"]), str):
        raise BadReturn("a transform needs text")
    return result  # type: ignore[return-value]


def _fold_input(event: dict[str, Any], result: Any) -> None:
    if result["action"] == "transform":
        event["text"] = result.get("text", event["text"])
        if "images" in result:
            event["images"] = result["images"]


@hookspec
@returns(
    Rule(
        "handled stops; transforms chain",
        check=_check_input,
        stop=lambda result: result["action"] == "handled",
        fold=_fold_input,
    )
)
def on_input(event: InputEvent, ctx: Any) -> InputResult | None:
    """User input, before skills and templates expand it (not for ``/command`` input)."""


if TYPE_CHECKING:

    class BeforeAgentStartEvent(TypedDict):
        messageType: str
        """``user`` (with ``prompt``, ``images``, ``message``) or ``custom``."""
        prompt: NotRequired[str]
        images: NotRequired[list[Any] | None]
        message: NotRequired[Any]
        systemPrompt: str
        """The prompt as chained so far (earlier handlers' replacements included)."""
        systemPromptOptions: dict[str, Any]

    class BeforeAgentStartResult(TypedDict, total=False):
        message: Any
        """A custom message (or a dict ``{customType, content, display?, details?}``) stored in the
        session and sent with the prompt."""
        systemPrompt: str
        """Replaces the whole system prompt every provider receives for this run; the session file
        keeps the structured sections."""


def as_custom_message(value: Any) -> Any:
    """A ``CustomMessage`` from one or from a pi-shaped dict; :class:`BadReturn` otherwise."""
    from pi_host.protocol import CustomMessage, parse_message

    if isinstance(value, CustomMessage):
        return value
    if isinstance(value, dict) and value.get("role", "custom") == "custom" and "customType" in value:
        try:
            return parse_message({"role": "custom", **value})
        except ValueError as exc:
            raise BadReturn(f"message is not a valid custom message: {str(exc).splitlines()[0]}") from None
    raise BadReturn(f"message must be a custom message ({{customType, content}}), got {type(value).__name__}")


def _check_before_start(event: dict[str, Any], result: Any) -> BeforeAgentStartResult:
    result = dict(expect_dict(result))
    if result.get("message") is not None:
        result["message"] = as_custom_message(result["message"])
    prompt = result.get("systemPrompt")
    if prompt is not None and not isinstance(prompt, str):
        raise BadReturn(f"systemPrompt must be a string, got {type(prompt).__name__}")
    return result  # type: ignore[return-value]


def _fold_system_prompt(event: dict[str, Any], result: Any) -> None:
    if result.get("systemPrompt") is not None:
        event["systemPrompt"] = result["systemPrompt"]


@hookspec
@returns(
    Rule(
        "messages accumulate; systemPrompt chains",
        check=_check_before_start,
        fold=_fold_system_prompt,
        combine=lambda results: [r["message"] for r in results if r.get("message") is not None],
    )
)
def on_before_agent_start(event: BeforeAgentStartEvent, ctx: Any) -> BeforeAgentStartResult | None:
    """After input handling and expansion, before the run starts."""
