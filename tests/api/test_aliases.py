"""The module paths of pi-host 0.1 (documented for plugin authors) still import, as the very
module objects of the layered layout, in a fresh interpreter as a plugin would meet them."""

from __future__ import annotations

from pi_host._aliases import current_name


def test_unmoved_names_are_left_alone():
    assert current_name("pi_host.protocol.messages") is None
    assert current_name("pi_host.lib.llm.http") is None
    assert current_name("pi_host.llm.credentials") == "pi_host.config.credentials"
    assert current_name("pi_host.llm.sse") == "pi_host.lib.llm.sse"
