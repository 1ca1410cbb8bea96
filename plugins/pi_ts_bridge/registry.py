"""What extensions register while a session runs (pi's registrations take effect at once: a tool
from ``session_start`` or a command is in the same session's tool list), the event bus shared
with pi-host's plugins, model calls, and the extensions' own abort signals."""

from __future__ import annotations

from typing import Any

from pi_host import Command
from pi_ts_bridge.extension import BridgeRuntime, Extension
from pi_ts_bridge.tools import ScriptTool


def first_line(text: Any) -> str:
    lines = [line for line in str(text or "").splitlines() if line.strip()]
    return lines[0].strip() if lines else "unknown error"


# --- tools and commands ------------------------------------------------------------------------


def add_tool(runtime: BridgeRuntime, extension: Extension, info: dict[str, Any]) -> None:
    extension.tools[info["name"]] = info
    session = getattr(runtime.ctx, "session", None)
    if session is None:
        return  # the next session's register_tools picks it up
    tool = ScriptTool(extension, info)
    session.all_tools[tool.name] = tool
    session.builtin_tools.discard(tool.name)
    if tool.default_active:
        session.active_tools[tool.name] = tool


def make_command(extension: Extension, info: dict[str, Any]) -> Command:
    name = info["name"]
    runtime = extension.runtime

    async def handler(args: str, ctx: Any) -> None:
        runtime.bind(ctx)
        frame = {"t": "cmd", "name": name, "args": args}
        signal = getattr(ctx, "signal", None)
        if signal is not None:
            frame["sig"] = runtime.signal_id(signal)
        await runtime.request(extension, frame)

    complete = None
    if info.get("completes"):

        async def complete(prefix: str) -> Any:
            return await runtime.request(extension, {"t": "complete", "name": name, "prefix": prefix}) or []

    # where the command comes from is read off its handler's code (RPC get_commands' sourceInfo):
    # name the extension's file, not this module
    handler.__code__ = handler.__code__.replace(co_filename=extension.record.origin)
    return Command(name=name, handler=handler, description=info.get("description") or "", complete=complete)


def add_command(runtime: BridgeRuntime, extension: Extension, info: dict[str, Any]) -> None:
    extension.commands[info["name"]] = info
    session = getattr(runtime.ctx, "session", None)
    if session is None:
        return
    command = make_command(extension, info)
    name, index = command.name, 1
    while name in session.commands:
        name, index = f"{command.name}:{index}", index + 1
    session.commands[name] = command
    owners = getattr(session, "_owners", None)
    if isinstance(owners, dict):
        owners[id(command)] = extension.name  # a failure names the extension


def all_tools(runtime: BridgeRuntime) -> list[dict[str, Any]]:
    tools = runtime.ctx.get_all_tools()
    for tool in tools:
        source = tool.get("sourceInfo") or {}
        tool.setdefault("exposure", "direct")
        tool["sourceInfo"] = {
            "path": f"builtin:{tool['name']}" if source.get("source") == "builtin" else "",
            "source": source.get("source", "extension"),
            "scope": "temporary",
            "origin": "top-level",
        }
    return tools


def subscribe_late(runtime: BridgeRuntime, extension: Extension, event: str) -> None:
    """``pi.on`` after the factory returned, for an event the extension had no handler of."""
    from pi_ts_bridge.events import add_event_hook

    add_event_hook(runtime, extension, event, late=True)


# --- the event bus -------------------------------------------------------------------------------


def bus_listen(runtime: BridgeRuntime, name: str) -> None:
    """pi-host plugins' emits of ``name`` reach the extensions too."""
    if name in runtime.bus_names:
        return
    runtime.bus_names.add(name)
    from pi_host.runtime.extension_api import event_bus

    def forward(data: Any) -> None:
        if not runtime.bus_from_bridge and runtime.channel is not None:
            from pi_ts_bridge.wire import to_wire

            runtime.channel.send({"t": "bus", "name": name, "data": to_wire(data)})

    event_bus(runtime.host).on(name, forward, owner="ts-bridge")


def bus_emit(runtime: BridgeRuntime, name: str, data: Any) -> None:
    """An extension's emit reaches pi-host's plugins (the extensions already got it)."""
    from pi_host.runtime.extension_api import event_bus

    runtime.bus_from_bridge = True
    try:
        event_bus(runtime.host).emit(name, data)
    finally:
        runtime.bus_from_bridge = False


# --- signals and model calls ----------------------------------------------------------------------


def local_signal(runtime: BridgeRuntime, ident: str) -> Any:
    """pi-host's signal for an extension's own AbortSignal (aborted by ``signal.abort``)."""
    from pi_host.protocol.abort import AbortController

    controller = runtime.local_signals.get(ident)
    if controller is None:
        controller = runtime.local_signals[ident] = AbortController()
    return controller.signal


def abort_local(runtime: BridgeRuntime, ident: str) -> None:
    local_signal(runtime, ident)
    runtime.local_signals[ident].abort("Aborted by the extension")


async def complete(
    runtime: BridgeRuntime, key: str, context: dict[str, Any], options: dict[str, Any], signal: Any
) -> Any:
    """``ctx.modelRegistry.complete``: one request through pi-host's providers and keys."""
    import uuid

    from pi_host.protocol import LlmContext, StreamOptions, SystemMessage, ToolDecl, parse_message
    from pi_host.protocol.abort import race

    session = runtime.ctx.session
    provider, _, model_id = key.partition("/")
    model = session.registry.find(provider, model_id)
    if model is None:
        raise LookupError(f"Unknown model {key}")
    messages = [parse_message(m) for m in context.get("messages") or []]
    if context.get("systemPrompt"):
        messages.insert(0, SystemMessage(content=context["systemPrompt"]))
    tools = [ToolDecl(**t) for t in context.get("tools") or [] if isinstance(t, dict)]
    bridge = getattr(session, "bridge", None)
    stream_options = bridge.transport_options() if bridge is not None else StreamOptions()
    stream_options.signal = local_signal(runtime, signal) if signal else None
    stream_options.api_key = session.config.api_key or session.registry.get_api_key(model.provider)
    if options.get("maxTokens"):
        stream_options.max_tokens = int(options["maxTokens"])
    stream_options.session_id = options.get("sessionId") or str(uuid.uuid4())
    stream_options.cache_retention = options.get("cacheRetention") or "none"
    stream = session.registry.stream_fn(model)(
        model, LlmContext(messages=messages, tools=tools), stream_options
    )

    async def consume() -> Any:
        async for event in stream:
            if event.type == "done":
                return event.message
            if event.type == "error":
                return event.error
        raise RuntimeError("the provider stream ended without a result")

    if stream_options.signal is not None:
        return await race(stream_options.signal, consume())
    return await consume()
