"""Each provider request: the context sent, the headers, the body, the response and its raw stream
events; model and thinking-level changes (reference §9.3, in the order pi runs them)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypedDict

from pi_host.plugins.hookspecs._marker import hookspec
from pi_host.plugins.rules import IGNORED, BadReturn, Rule, chained, returns

__all__ = [
    "on_after_provider_response",
    "on_before_provider_headers",
    "on_before_provider_request",
    "on_context",
    "on_context_with_system",
    "on_model_select",
    "on_provider_stream_event",
    "on_thinking_level_select",
]


if TYPE_CHECKING:  # payload types, for type checkers and readers (free at run time)

    class ContextEvent(TypedDict):
        messages: list[Any]


def _check_messages(event: dict[str, Any], result: dict[str, Any]) -> Any:
    messages = result["messages"]
    if not isinstance(messages, list):
        raise BadReturn("messages must be a list")
    from pi_host.protocol import parse_message

    try:
        parsed = [parse_message(m) if isinstance(m, dict) else m for m in messages]
    except ValueError as exc:
        raise BadReturn(f"messages: {str(exc).splitlines()[0]}") from None
    return {**result, "messages": parsed}


@hookspec
@returns(chained("messages", _check_messages, "{messages} chained"))
def on_context(event: ContextEvent, ctx: Any) -> ContextEvent | None:
    """Before each request: a deep copy of the context without system messages."""


@hookspec
@returns(chained("messages", _check_messages, "{messages} chained"))
def on_context_with_system(event: ContextEvent, ctx: Any) -> ContextEvent | None:
    """Before each request, after ``context``: the full transcript (keep a system message at
    index 0)."""


if TYPE_CHECKING:

    class HeadersEvent(TypedDict):
        headers: dict[str, Any]
        """Mutable: set a value to None to delete the header."""


@hookspec
@returns(IGNORED)
def on_before_provider_headers(event: HeadersEvent, ctx: Any) -> None:
    """The request headers, changed in place."""


if TYPE_CHECKING:

    class RequestEvent(TypedDict):
        payload: Any


def _check_payload(event: dict[str, Any], result: Any) -> Any:
    if not isinstance(result, dict):  # every API sends a JSON object: a string would be sent as is
        raise BadReturn(f"the payload must be a JSON object (a dict), got {type(result).__name__}")
    return result


def _fold_payload(event: dict[str, Any], result: Any) -> None:
    event["payload"] = result


@hookspec
@returns(Rule("a dict replaces the payload, chained", check=_check_payload, fold=_fold_payload))
def on_before_provider_request(event: RequestEvent, ctx: Any) -> Any:
    """The request body about to be sent; a return replaces it."""


if TYPE_CHECKING:

    class ResponseEvent(TypedDict):
        status: int
        headers: dict[str, str]


@hookspec
@returns(IGNORED)
def on_after_provider_response(event: ResponseEvent, ctx: Any) -> None:
    """The response status and headers, before its body is read."""


if TYPE_CHECKING:

    class StreamChunkEvent(TypedDict):
        provider: str
        api: str
        model: str
        data: Any


@hookspec
@returns(IGNORED)
def on_provider_stream_event(event: StreamChunkEvent, ctx: Any) -> None:
    """Each raw decoded stream chunk, in order."""


@hookspec
@returns(IGNORED)
def on_model_select(event: dict[str, Any], ctx: Any) -> None:
    """``{model, previousModel?, source: set|cycle}`` after the model changed (not on restore)."""


@hookspec
@returns(IGNORED)
def on_thinking_level_select(event: dict[str, Any], ctx: Any) -> None:
    """``{level, previousLevel}`` after the thinking level changed."""
