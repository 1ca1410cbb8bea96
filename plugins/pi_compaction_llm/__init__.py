"""The default compaction strategy: an LLM-written structured summary, and ``/compact [focus]``.

Thin on purpose: the prompts and the request code load only when a summary is needed.
"""

from pi_host import hookimpl
from pi_host.plugins.registrations import Command, CompactionStrategy


async def _summarize(preparation, ctx):
    from pi_compaction_llm.strategy import summarize

    return await summarize(preparation, ctx)


async def _summarize_branch(preparation, ctx):
    from pi_compaction_llm.strategy import summarize_branch

    return await summarize_branch(preparation, ctx)


async def _compact_command(args, ctx):
    import sys

    from pi_host.lib.compaction import CompactionError

    try:
        result = await ctx.compact(args.strip() or None)
    except CompactionError as exc:  # nothing to compact, a failed summary: an outcome, not a plugin failure
        if ctx.mode == "print":
            sys.stderr.write(f"pi: {exc}\n")
        return
    if ctx.mode == "print":
        if result is None:
            sys.stderr.write("pi: Compaction cancelled\n")
        else:
            sys.stderr.write(
                f"Compacted: {result['tokensBefore']} -> {result['estimatedTokensAfter']} tokens\n"
            )


@hookimpl
def register_compaction_strategies():
    return [CompactionStrategy(name="llm", summarize=_summarize, summarize_branch=_summarize_branch)]


@hookimpl
def register_commands():
    return [
        Command(
            name="compact",
            handler=_compact_command,
            description="Summarize older history to free context: /compact [what to focus on]",
            source="builtin",
        )
    ]
