"""The built-in renderers of the interactive mode: messages by role, the built-in tools' calls
and results, and the footer. Registered like any plugin's (a later registration for the same
role or tool wins); the drawing code loads on the first render."""

from pi_host import hookimpl
from pi_host.lib.lazy import lazy
from pi_host.plugins.registrations import FooterRenderer, MessageRenderer, ToolRenderer

MESSAGE_ROLES = {
    "user": "render_user",
    "assistant": "render_assistant",
    "bashExecution": "render_bash_execution",
    "compactionSummary": "render_compaction_summary",
    "branchSummary": "render_branch_summary",
    "custom": "render_custom",
}
TOOLS = ("bash", "edit", "write", "read", "grep", "find", "ls")


@hookimpl
def register_renderers():
    items: list = [
        MessageRenderer(render=lazy(f"pi_render_builtin.messages:{function}"), role=role)
        for role, function in MESSAGE_ROLES.items()
    ]
    items += [
        ToolRenderer(
            tool=tool,
            render_call=lazy(f"pi_render_builtin.tools:{tool}_call"),
            render_result=lazy(f"pi_render_builtin.tools:{tool}_result"),
        )
        for tool in TOOLS
    ]
    items.append(FooterRenderer(render=lazy("pi_render_builtin.footer:render_footer")))
    return items
