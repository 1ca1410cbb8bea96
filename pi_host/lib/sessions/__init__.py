"""Session storage for store plugins: the entry tree and its projection onto the model context
(``tree``), and stores built on it (``store``: ``TreeStore``, ``MemoryStore``)."""
