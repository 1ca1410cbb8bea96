"""The :class:`Agent`: state, queues and one run at a time over the kernel's loop (pi's
``pi-agent-core``).

The loop (:class:`pi_host.loop.loop.AgentLoop`) does the turns; the agent keeps what lives
between runs (the messages, the model, the tools, the queued input), starts and aborts runs,
hands every event to its subscribers in order (each awaited: a barrier before the loop goes on)
and writes finished messages to an optional store. The coding agent's
:class:`pi_host.session.agent_session.AgentSession` runs its prompts through one of these.
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from pi_host.agent.budget import Budget, projection
from pi_host.agent.declare import declare
from pi_host.agent.queues import PromptQueues
from pi_host.loop.convert import convert_to_llm as default_convert_to_llm
from pi_host.loop.loop import AgentLoop, LoopConfig
from pi_host.loop.tools import Tool, ToolContext, ToolResult
from pi_host.protocol.abort import AbortController, AbortSignal
from pi_host.protocol.messages import ImageContent, TextContent, UserMessage
from pi_host.protocol.model import StreamOptions
from pi_host.protocol.transcript import replay_system

__all__ = ["Agent", "AgentBusyError", "AgentState", "BudgetExceeded", "Listener"]

Listener = Callable[[dict[str, Any]], Awaitable[Any] | Any]
"""Receives each event dict (``{"type": ..., ...}``, pi's names); may be async (awaited)."""
Hook = Callable[..., Awaitable[Any] | Any]


class AgentBusyError(RuntimeError):
    """A run is in progress: queue the input with ``steer`` / ``follow_up`` instead."""


class BudgetExceeded(RuntimeError):
    """The agent's cost budget is spent; raise ``max_cost`` to go on."""


async def _maybe(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


class AgentState:
    """What an agent holds between runs. ``messages`` and ``tools`` keep their identity: assigning
    replaces their contents (pi copies the top-level array the same way)."""

    def __init__(self, model: Any, thinking_level: str, tools: Any, messages: Iterable[Any]) -> None:
        self.model = model
        self.thinking_level = thinking_level
        self._tools: dict[str, Tool] = {}
        self.tools = tools
        self._messages: list[Any] = list(messages)
        self.is_streaming = False
        self.streaming_message: Any = None
        """The partial assistant message while one streams."""
        self.pending_tool_calls: set[str] = set()
        self.error_message: str | None = None
        """The last run's failure (a provider error, an abort, a budget), None after a success."""
        self.total_cost = 0.0
        """USD spent by the assistant messages this agent finished (what ``max_cost`` limits)."""

    @property
    def tools(self) -> dict[str, Tool]:
        """The executable tools by name."""
        return self._tools

    @tools.setter
    def tools(self, value: Any) -> None:
        items = value.values() if isinstance(value, dict) else (value or ())
        fresh = {tool.name: tool for tool in items}
        self._tools.clear()
        self._tools.update(fresh)

    @property
    def messages(self) -> list[Any]:
        return self._messages

    @messages.setter
    def messages(self, value: Iterable[Any]) -> None:
        self._messages[:] = list(value)

    @property
    def system_prompt(self) -> str:
        """The prompt the transcript declares now (its system messages replayed)."""
        return replay_system(self._messages).render()


class Agent:
    """A stateful agent over the kernel's loop.

    Only ``model`` is needed to talk; everything else has a default: requests go through
    :func:`pi_host.ai.default_models` (the installed provider plugins, keys from the environment)
    unless ``models`` or ``stream_fn`` is given, and ``convert_to_llm`` keeps the provider roles,
    sends ``custom`` messages as user text and drops roles it does not know (so a custom message
    type stays out of the model's context unless your ``convert_to_llm`` maps it).

    Hooks (each may be sync or async):

    * ``transform_context(messages) -> messages``: before ``convert_to_llm``, on every request;
    * ``convert_to_llm(messages) -> messages``: the provider roles only;
    * ``before_tool_call({"toolCall", "args", "tool"})``: return ``{"block": True, "reason": ...,
      "terminate"?: bool}`` to refuse the call;
    * ``after_tool_call({"toolCall", "args", "result"})``: return a :class:`ToolResult` or a
      patch dict (``content``, ``details``, ``isError``, ``terminate``);
    * ``get_api_key(provider) -> key`` on every request (expiring tokens);
    * ``finish_turn({"message", "toolResults"})``: ``{"action": "end" | "continue"}``.

    Budgets: ``max_turns`` ends a run after that many turns; ``max_cost`` (USD, over the agent's
    life) ends the run whose turn reaches it and refuses new runs. Either emits
    ``{"type": "budget_exceeded", "budget": "turns" | "cost", "limit", "spent"}`` first.
    ``budget`` (a :class:`pi_host.agent.budget.Budget`, possibly inside a parent's) is checked
    before every request, the first of a run included: a request that would cross one of its
    limits is not sent; the run ends with ``budget_exceeded`` (``budget`` also ``tokens`` or
    ``time``, plus ``scope``) and ``budget_stop`` says why.

    For hosts that drive the agent (the coding agent's session): ``declare_tool_changes``,
    ``prepare_next_turn``, ``after_run(new_messages, signal)`` (return messages to run again, ``[]``
    to re-send the context, None to stop), ``before_idle(aborted)`` (the last step of a run) and
    ``on_queue_change(steering_texts, follow_up_texts)``.
    """

    def __init__(
        self,
        model: Any = None,
        *,
        system_prompt: str | None = None,
        thinking_level: str = "off",
        tools: Iterable[Tool] | dict[str, Tool] = (),
        messages: Iterable[Any] | None = None,
        models: Any = None,
        stream_fn: Callable[..., Any] | None = None,
        stream_options: StreamOptions | Callable[[], StreamOptions] | None = None,
        session_id: str | None = None,
        convert_to_llm: Callable[[list[Any]], list[Any]] | None = None,
        transform_context: Hook | None = None,
        before_tool_call: Hook | None = None,
        after_tool_call: Hook | None = None,
        get_api_key: Hook | None = None,
        finish_turn: Hook | None = None,
        steering_mode: str = "one-at-a-time",
        follow_up_mode: str = "one-at-a-time",
        tool_execution: str = "parallel",
        tool_context: ToolContext | None = None,
        max_turns: int | None = None,
        max_cost: float | None = None,
        budget: Budget | None = None,
        store: Any = None,
        declare_tool_changes: Hook | None = None,
        prepare_next_turn: Hook | None = None,
        after_run: Hook | None = None,
        before_idle: Hook | None = None,
        on_queue_change: Callable[[list[str], list[str]], None] | None = None,
    ) -> None:
        if messages is None:
            load = getattr(store, "load", None)
            messages = load() if load is not None else ()
        self.state = AgentState(model, thinking_level, tools, messages)
        self.system_prompt = system_prompt
        """Declared in the leading system message before the first request (when the transcript
        has none yet); later changes go in through system messages of your own."""
        self.models = models
        self.stream_fn = stream_fn
        self.stream_options = stream_options
        self.session_id = session_id
        self.convert_to_llm = convert_to_llm
        self.transform_context = transform_context
        self.before_tool_call = before_tool_call
        self.after_tool_call = after_tool_call
        self.get_api_key = get_api_key
        self.finish_turn = finish_turn
        self.steering_mode = steering_mode
        self.follow_up_mode = follow_up_mode
        self.tool_execution = tool_execution
        self.tool_context = tool_context
        self.max_turns = max_turns
        self.max_cost = max_cost
        self.budget = budget
        self.budget_stop: dict[str, Any] | None = None
        """Why the last run stopped on a budget (the ``budget_exceeded`` event), else None."""
        self.store = store
        self.declare_tool_changes = declare_tool_changes
        self.prepare_next_turn = prepare_next_turn
        self.after_run = after_run
        self.before_idle = before_idle
        self.queues = PromptQueues(on_queue_change or (lambda steering, follow_up: None))
        self._listeners: list[Listener] = []
        self._controller: AbortController | None = None
        self._run_task: asyncio.Task[Any] | None = None
        self._idle = asyncio.Event()
        self._idle.set()
        self._turns = 0

    # --- running ------------------------------------------------------------------------------

    @property
    def is_streaming(self) -> bool:
        return self._run_task is not None and not self._run_task.done()

    @property
    def signal(self) -> AbortSignal | None:
        """The running run's abort signal (None while idle)."""
        return self._controller.signal if self._controller is not None else None

    async def prompt(
        self, input: str | Any | list[Any], images: list[ImageContent] | None = None, *, wait: bool = True
    ) -> None:
        """Start a run with a text (and images), a message or a list of messages; with ``wait``
        (default) return once it settled (re-raising a failure of the run itself, not a provider
        error: that is the assistant message's ``stop_reason`` ``error``)."""
        if isinstance(input, str):
            messages = [UserMessage(content=[TextContent(text=input), *(images or ())])]
        else:
            messages = list(input) if isinstance(input, list) else [input]
        self.start(messages)
        if wait:
            await self.wait_for_idle()

    async def continue_(self, *, wait: bool = True) -> None:
        """Run again from the transcript as it is: a user or tool-result tail is answered; after an
        assistant tail (nothing to answer) one queued steering batch, else one follow-up batch,
        is sent (nothing queued: ``ValueError``)."""
        if self.is_streaming:
            raise AgentBusyError("Agent is already running")
        tail = next((m for m in reversed(self.state.messages) if getattr(m, "role", None) != "system"), None)
        if tail is None:
            raise ValueError("No messages to continue from")
        batch: list[Any] = []
        if getattr(tail, "role", None) == "assistant":
            batch = self.queues.take(self.queues.steering, self.steering_mode) or self.queues.take(
                self.queues.follow_up, self.follow_up_mode
            )
            if not batch:
                raise ValueError("The last message is the assistant's: prompt, or queue a message first")
        self.start(batch)
        if wait:
            await self.wait_for_idle()

    def start(self, messages: list[Any]) -> None:
        """Start a run with ``messages`` as they are and return at once (``wait_for_idle``)."""
        if self.is_streaming:
            raise AgentBusyError("Agent is already running: use steer() or follow_up()")
        if self.max_cost is not None and self.state.total_cost >= self.max_cost:
            raise BudgetExceeded(f"Cost budget spent: ${self.state.total_cost:.4f} of ${self.max_cost:.4f}")
        self._controller = AbortController()
        self._idle.clear()
        self.state.is_streaming = True
        self.state.error_message = None
        self._run_task = asyncio.ensure_future(self._run(messages, self._controller))

    def steer(self, message: str | Any, images: list[ImageContent] | None = None) -> None:
        """Queue a message for after the current tool batch (``continue_`` sends it when idle)."""
        self.queues.add(self.queues.steering, *self._queued(message, images))

    def follow_up(self, message: str | Any, images: list[ImageContent] | None = None) -> None:
        """Queue a message for when the run would otherwise stop."""
        self.queues.add(self.queues.follow_up, *self._queued(message, images))

    def clear_steering_queue(self) -> None:
        self.queues.steering.clear()

    def clear_follow_up_queue(self) -> None:
        self.queues.follow_up.clear()

    def clear_all_queues(self) -> dict[str, list[str]]:
        return self.queues.clear()

    def has_queued_messages(self) -> bool:
        return bool(self.queues)

    def abort(self, reason: str = "Operation aborted") -> None:
        """Abort the running run (the provider request and running tools); returns at once."""
        if self._controller is not None:
            self._controller.abort(reason)

    async def wait_for_idle(self) -> None:
        """Return once no run is in progress; a run that failed raises its error here once."""
        await self._idle.wait()
        task = self._run_task
        if task is not None and task.done() and not task.cancelled():
            error = task.exception()
            if error is not None:
                self._run_task = None
                raise error

    async def add_message(self, message: Any) -> None:
        """Add a message of your own while idle (a note, a custom type): in the transcript, in the
        store, and to subscribers as ``message_start`` / ``message_end``."""
        if self.is_streaming:
            raise AgentBusyError("Agent is running: steer() or follow_up() instead")
        await self._emit({"type": "message_start", "message": message})
        self.state.messages.append(message)
        await self._emit({"type": "message_end", "message": message})

    def reset(self) -> None:
        """Forget the transcript, the queues and the last error (the agent must be idle)."""
        if self.is_streaming:
            raise AgentBusyError("Agent is running: abort() it first")
        self.state.messages = []
        self.state.error_message = None
        self.queues.clear()

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Receive every event, in registration order, each awaited; returns an unsubscribe."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    # --- the run ------------------------------------------------------------------------------

    async def _run(self, prompts: list[Any], controller: AbortController) -> None:
        self._turns = 0
        self.budget_stop = None
        try:
            while True:
                if await self._refuse_request():  # the run's first request would cross a budget
                    await self._emit({"type": "agent_start"})
                    await self._emit({"type": "agent_end", "messages": []})
                    break
                new_messages = await AgentLoop(
                    self._loop_config(controller.signal), self.state.messages, self._emit
                ).run(prompts)
                if controller.signal.aborted or self.after_run is None:
                    break
                again = await _maybe(self.after_run(new_messages, controller.signal))
                if again is None:
                    break
                prompts = list(again)
            if self.before_idle is not None:
                # the run is over: settle handlers see no signal (nothing left to abort), which
                # is how they tell they run at the end, not inside a turn
                self._controller = None
                await _maybe(self.before_idle(controller.signal.aborted))
        finally:
            self._controller = None
            self.state.is_streaming = False
            self.state.streaming_message = None
            self.state.pending_tool_calls.clear()
            self._idle.set()

    def _loop_config(self, signal: AbortSignal) -> LoopConfig:
        state = self.state
        return LoopConfig(
            model=state.model,
            stream_fn=lambda model: self._stream,
            tools=dict(state.tools),
            thinking_level=state.thinking_level,
            tool_execution=self.tool_execution,
            signal=signal,
            tool_context=self.tool_context,
            stream_options=self._stream_options,
            convert_to_llm=self.convert_to_llm or default_convert_to_llm,
            transform_context=self.transform_context,
            get_api_key=self.get_api_key,
            declare_tool_changes=self.declare_tool_changes or self._declare,
            before_tool_call=self.before_tool_call,
            after_tool_call=self._after_tool_call if self.after_tool_call is not None else None,
            prepare_next_turn=self.prepare_next_turn,
            finish_turn=self._finish_turn,
            get_steering_messages=lambda: self.queues.take(self.queues.steering, self.steering_mode),
            get_follow_up_messages=lambda: self.queues.take(self.queues.follow_up, self.follow_up_mode),
        )

    def _stream(self, model: Any, context: Any, options: StreamOptions) -> Any:
        if self.stream_fn is not None:
            return self.stream_fn(model, context, options)
        if self.models is None:
            from pi_host.ai.models import default_models  # the plugins load on the first request

            self.models = default_models()
        return self.models.stream(model, context, options)

    def _stream_options(self) -> StreamOptions:
        given = self.stream_options
        options = given() if callable(given) else dataclasses.replace(given) if given else StreamOptions()
        if options.session_id is None:
            options.session_id = self.session_id
        return options

    def _declare(self, context: list[Any], pending: list[Any]) -> list[Any]:
        tools = [tool.declaration() for tool in self.state.tools.values()]
        return declare(context, pending, self.system_prompt, tools)

    async def _after_tool_call(self, call: dict[str, Any]) -> Any:
        assert self.after_tool_call is not None
        patch = await _maybe(self.after_tool_call(call))
        if not isinstance(patch, dict):
            return patch
        result: ToolResult = call["result"]
        fields = {"isError": "is_error", "structuredContent": "structured_content"}
        return dataclasses.replace(result, **{fields.get(k, k): v for k, v in patch.items()})

    async def _finish_turn(self, turn: dict[str, Any]) -> Any:
        decision = await _maybe(self.finish_turn(turn)) if self.finish_turn is not None else None
        self._turns += 1
        budget = None
        if self.max_turns is not None and self._turns >= self.max_turns:
            budget = ("turns", self.max_turns, self._turns)
        elif self.max_cost is not None and self.state.total_cost >= self.max_cost:
            budget = ("cost", self.max_cost, self.state.total_cost)
        if budget is None:
            more = (
                turn.get("toolResults")
                or (isinstance(decision, dict) and decision.get("action") == "continue")
                or bool(self.queues)
            )
            # the next request (tool results to answer, one asked for, queued input) must fit the
            # budget; a run that ends here anyway is left to end by itself
            if more and await self._refuse_request():
                return {"action": "end"}
            return decision
        kind, limit, spent = budget
        self.state.error_message = f"Budget reached: {kind} {spent} of {limit}"
        await self._emit({"type": "budget_exceeded", "budget": kind, "limit": limit, "spent": spent})
        return {"action": "end"}

    async def _refuse_request(self) -> bool:
        """Whether ``budget`` refuses the next request (then ``budget_exceeded`` is emitted)."""
        if self.budget is None:
            return False
        found = self.budget.check(*projection(self.state.messages, self.state.model))
        if found is None:
            return False
        self.budget_stop = found
        self.state.error_message = f"Budget reached: {found['budget']} {found['spent']} of {found['limit']}"
        await self._emit({"type": "budget_exceeded", **found})
        return True

    async def _emit(self, event: dict[str, Any]) -> None:
        state = self.state
        kind = event["type"]
        if kind == "message_start":
            self.queues.started(event["message"])  # its queue_update comes before its message_start
        elif kind == "agent_end":
            self.queues.settle()
        if kind == "message_update":
            state.streaming_message = event["message"]
        elif kind == "message_end":
            message = event["message"]
            state.streaming_message = None
            if getattr(message, "role", None) == "assistant":
                state.total_cost += float(message.usage.cost.total or 0)
                if self.budget is not None:
                    self.budget.charge(message.usage)
                if message.stop_reason in ("error", "aborted"):
                    state.error_message = message.error_message or message.stop_reason
            if self.store is not None:
                self.store.append(message)
        elif kind == "tool_execution_start":
            state.pending_tool_calls.add(event["toolCallId"])
        elif kind == "tool_execution_end":
            state.pending_tool_calls.discard(event["toolCallId"])
        for listener in list(self._listeners):
            result = listener(event)
            if inspect.isawaitable(result):
                await result

    @staticmethod
    def _queued(message: str | Any, images: list[ImageContent] | None) -> tuple[Any, str]:
        if isinstance(message, str):
            return UserMessage(content=[TextContent(text=message), *(images or ())]), message
        content = getattr(message, "content", "")
        text = content if isinstance(content, str) else "".join(getattr(b, "text", "") for b in content)
        return message, text
