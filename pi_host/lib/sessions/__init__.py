"""Session storage for store plugins: the entry tree (``tree``), how entries project onto the
model context (``projection``), and stores built on the tree (``store``: ``TreeStore``,
``MemoryStore``)."""
