"""The default compaction strategy: an LLM-written structured summary. (``/compact`` is the
interactive mode's command; in print, JSON and RPC modes a ``/compact`` prompt goes to the model,
as in pi.)

Thin on purpose: the prompts and the request code load only when a summary is needed.
"""

from pi_host import hookimpl
from pi_host.plugins.registrations import CompactionStrategy


async def _summarize(preparation, ctx):
    from pi_compaction_llm.strategy import summarize

    return await summarize(preparation, ctx)


async def _summarize_branch(preparation, ctx):
    from pi_compaction_llm.strategy import summarize_branch

    return await summarize_branch(preparation, ctx)


@hookimpl
def register_compaction_strategies():
    return [CompactionStrategy(name="llm", summarize=_summarize, summarize_branch=_summarize_branch)]
