"""``pi_render_builtin`` registers through the plugin machinery, cheaply."""

from __future__ import annotations

import pi_render_builtin

from pi_host.lib.render import RenderContext, ToolCallView, ToolResultView, default_theme
from pi_host.plugins.dispatch import PluginHost, PluginRecord
from pi_host.plugins.registrations import FooterRenderer, MessageRenderer, ToolRenderer


def collected():
    host = PluginHost(strict=True)
    assert host.register(pi_render_builtin, PluginRecord(name="render-builtin", source="builtin"))
    return list(host.collect("register_renderers"))


def test_registers_unique_renderers_through_the_host():
    items = collected()
    messages = [(i.role, i.custom_type) for i in items if isinstance(i, MessageRenderer)]
    tools = [i.tool for i in items if isinstance(i, ToolRenderer)]
    footers = [i for i in items if isinstance(i, FooterRenderer)]
    assert len(messages) == len(set(messages))
    assert len(tools) == len(set(tools))
    assert {role for role, _ in messages} >= {
        "user",
        "assistant",
        "bashExecution",
        "compactionSummary",
        "branchSummary",
        "custom",
    }
    assert set(tools) >= {"bash", "edit", "write", "read", "grep", "find", "ls"}
    assert len(footers) == 1


def test_registered_functions_resolve_and_render():
    rc = RenderContext(width=40, theme=default_theme("256"))
    for item in collected():
        if isinstance(item, ToolRenderer):
            call = ToolCallView(id="1", name=item.tool, args={})
            assert isinstance(item.render_call(call, rc), str)
            result = ToolResultView(content=[{"type": "text", "text": "x"}])
            assert isinstance(item.render_result(call, result, rc), str)
        elif isinstance(item, MessageRenderer):
            message = {
                "role": item.role,
                "content": "hello",
                "summary": "s",
                "command": "ls",
                "customType": "t",
            }
            item.render(message, rc)
