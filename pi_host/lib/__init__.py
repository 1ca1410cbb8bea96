"""Libraries that plugins build on: provider helpers (``llm``), tool helpers (``toolkit``), the
compaction mechanism (``compaction``), the session tree and stores (``sessions``), resource
discovery (``resources``, ``frontmatter``), thin plugin modules (``lazy``) and the JSON-lines
event encoding modes print (``wire``).

The kernel (protocol, loop, plugin machinery, session) never imports from here; these modules
use the kernel's public names like any plugin.
"""
