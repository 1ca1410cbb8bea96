"""The same plugin commands over RPC (``pi --mode rpc -e control_plugin.py``): ``ctx.new_session``,
``fork``, ``switch_session``, ``reload`` and ``shutdown`` act as the RPC commands of those names."""

from __future__ import annotations

import threading
import time

from tests.support.loopback import LoopbackServer, Reply
from tests.support.paths import SUPPORT
from tests.support.rpc import World, pi_host_client

PLUGIN = str(SUPPORT / "control_plugin.py")


class Notes:
    def __init__(self, client) -> None:
        self.lines: list[str] = []
        self.changed = threading.Condition()
        client.on_ui_request(self.record)

    def record(self, request):
        if request.get("method") == "notify":
            with self.changed:
                self.lines.append(request.get("message", ""))
                self.changed.notify_all()

    def wait(self, text: str, timeout: float = 15) -> None:
        deadline = time.monotonic() + timeout
        with self.changed:
            while not any(text in line for line in self.lines):
                left = deadline - time.monotonic()
                assert left > 0, f"no notify {text!r}; got {self.lines}"
                self.changed.wait(left)


def test_session_control_from_a_plugin_command_over_rpc(tmp_path):
    world = World.make(tmp_path / "rpc")
    with LoopbackServer([Reply("first answer"), Reply("second answer")]) as server:
        client = pi_host_client(world, server, "-e", PLUGIN)
        try:
            notes = Notes(client)
            client.prompt_and_wait("hello one")
            first = client.get_state()
            client.prompt("/mknew")
            notes.wait("with-session new=True handoff=True")
            notes.wait("mknew cancelled=False")
            second = client.get_state()
            assert second["sessionId"] != first["sessionId"]
            client.prompt("/blocknext")
            client.prompt("/mknew")
            notes.wait("mknew cancelled=True")
            assert client.get_state()["sessionId"] == second["sessionId"]
            client.prompt_and_wait("hello two")
            client.prompt("/myfork")
            notes.wait("myfork cancelled=False text=hello two")
            forked = client.get_state()
            assert forked["sessionFile"] not in (first["sessionFile"], second["sessionFile"])
            client.prompt(f"/myswitch {first['sessionFile']}")
            notes.wait(f"switched to {first['sessionId']}")
            assert client.get_state()["sessionFile"] == first["sessionFile"]
            client.prompt("/myreload")
            notes.wait("reloaded")
            assert client.get_state()["sessionFile"] == first["sessionFile"]
            client.prompt("/bye")
            notes.wait("bye requested")
            deadline = time.monotonic() + 15
            while client.returncode is None and time.monotonic() < deadline:
                time.sleep(0.05)
            assert client.returncode == 0  # ctx.shutdown() ended the server on its own
        finally:
            client.close()
