"""The interactive mode refreshes the per-key model lists in the background at start, as pi
1.6.0 does: with an OpenRouter key, ``GET <baseUrl>/models/user`` goes out while the editor is
already usable, the narrowed list lands in models-store.json, and the model picker offers it;
``PI_OFFLINE`` asks nothing."""

from __future__ import annotations

import json
import sys
import time

from tests.support.interactive import PROMPT_READY, requires_tmux
from tests.support.loopback import LoopbackServer, write_models_json
from tests.support.providers.sse import Reply, SSEServer
from tests.support.terminal import Terminal

pytestmark = requires_tmux

KEY = "sk-or-v1-loopback-refresh-at-start"
USER_MODELS = {"data": [{"id": "moonshotai/kimi-k2.7-code", "context_length": 100000}]}


def _start(world, loop: LoopbackServer, openrouter: SSEServer, **extra: str) -> Terminal:
    path = write_models_json(world["agent"], loop.url)
    config = json.loads(open(path).read())
    config["providers"]["openrouter"] = {"baseUrl": openrouter.url + "/api/v1"}
    open(path, "w").write(json.dumps(config))
    env = {**world["env"], "OPENROUTER_API_KEY": KEY, **extra}
    argv = [sys.executable, "-m", "pi_host", "--model", "loop/loop-1"]
    terminal = Terminal(argv, env=env, cwd=world["work"], width=100, height=30)
    terminal.wait_for(PROMPT_READY, timeout=20)
    return terminal


def test_start_refreshes_the_per_key_list_and_the_picker_offers_it(world):
    store = world["agent"] / "models-store.json"
    openrouter = SSEServer().start()
    try:
        openrouter.enqueue(Reply.json(200, USER_MODELS), path="/api/v1/models/user")
        with LoopbackServer(["unused"]) as loop, _start(world, loop, openrouter) as term:
            deadline = time.monotonic() + 15
            while not store.exists() and time.monotonic() < deadline:
                time.sleep(0.05)
            stored = json.loads(store.read_text())["openrouter"]
            assert [m["id"] for m in stored["models"]] == ["moonshotai/kimi-k2.7-code"]
            request = openrouter.last
            assert (request.method, request.path) == ("GET", "/api/v1/models/user")
            assert request.headers["authorization"] == f"Bearer {KEY}"
            # the catalog is reloaded on the event loop once the thread that wrote the file is
            # done: a picker opened in between still shows the built-in list, so look again
            # (A single match switches at once, without a picker: then the next Escape would be
            # the second of a double Escape, which opens the session tree, if it came within
            # 0.5 s of the one closing a picker; so each Escape closes a picker that is there.)
            for _attempt in range(5):
                term.send("/model kimi")
                term.press("Enter")
                try:
                    screen = term.wait_for("kimi-k2.7-code", timeout=3, scrollback=False)
                    break
                except AssertionError:
                    term.press("Escape")
                    time.sleep(1.0)
            else:
                raise AssertionError("the picker never offered the refreshed model")
            assert "openrouter" in screen
            if "Model: openrouter/moonshotai/kimi-k2.7-code" not in screen:
                term.press("Escape")  # the picker is open
                time.sleep(0.6)
            term.press("C-d")
            assert term.wait_exit() == 0
    finally:
        openrouter.stop()


def test_offline_start_asks_nothing(world):
    openrouter = SSEServer().start()
    try:
        with LoopbackServer(["unused"]) as loop, _start(world, loop, openrouter, PI_OFFLINE="1") as term:
            time.sleep(1.0)  # time enough for a background request to go out
            term.press("C-d")
            assert term.wait_exit() == 0
        assert openrouter.requests == []
        assert not (world["agent"] / "models-store.json").exists()
    finally:
        openrouter.stop()
