"""The plugin contract, checked where users meet it: the real ``pi`` command in a subprocess.

Each test here names one promise of the host (trust reaches plugin loading, ordering marks,
rejected wrappers and typos, failures named after the plugin that failed, one line per failure,
declared hooks that fire, ``before_agent_start`` returns, settings precedence, unknown options and
subcommands, selectable modes) and breaks it on purpose from the outside.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

PI = [sys.executable, "-m", "pi_host"]


def pi(*args: str, cwd: Path | None = None, script=None, env: dict | None = None, stdin: str = ""):
    environ = dict(os.environ)
    if script is not None:
        environ["PI_FAUX_SCRIPT"] = json.dumps(script)
    environ.update(env or {})
    return subprocess.run(
        [*PI, *args], cwd=cwd, env=environ, input=stdin, capture_output=True, text=True, timeout=120
    )


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip())
    return path


def lines_with(text: str, needle: str) -> list[str]:
    return [line for line in text.splitlines() if needle in line]


def fake_distribution(site: Path, dist: str, entry_points: dict[str, str], modules: dict[str, str]) -> Path:
    """An installed distribution as importlib.metadata sees one: a ``.dist-info`` directory with
    METADATA and entry_points.txt, and its modules, in ``site`` (put ``site`` on PYTHONPATH)."""
    info = site / f"{dist.replace('-', '_')}-1.0.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.0\n")
    lines = ["[pi_host]"] + [f"{name} = {target}" for name, target in entry_points.items()]
    (info / "entry_points.txt").write_text("\n".join(lines) + "\n")
    for name, source in modules.items():
        write(site / f"{name}.py", source)
    return site


MARKER_PLUGIN = """
import os
import pathlib

pathlib.Path(os.environ["PI_TEST_MARKER"]).write_text("imported")
"""


# --- trust reaches plugin loading ----------------------------------------------------------------


@pytest.fixture
def untrusted_project(isolated_environment, tmp_path):
    work = isolated_environment["work"]
    write(work / ".pi" / "extensions" / "marker.py", MARKER_PLUGIN)
    marker = tmp_path / "marker"
    return work, marker


@pytest.mark.parametrize(
    "args",
    [
        ("-na", "-p", "--no-session", "--model", "faux/faux-1", "hi"),
        ("-p", "--no-session", "--model", "faux/faux-1", "hi"),
        ("--help",),
        ("plugins",),
        ("plugins", "--json"),
    ],
    ids=["no-approve", "no-decision", "help", "plugins", "plugins-json"],
)
def test_untrusted_project_extension_is_never_imported(untrusted_project, args):
    work, marker = untrusted_project
    out = pi(*args, cwd=work, env={"PI_TEST_MARKER": str(marker)})
    assert out.returncode == 0, out.stderr
    assert not marker.exists(), f"pi {' '.join(args)} imported the untrusted project's extension"


def test_approved_project_extension_is_imported(untrusted_project):
    work, marker = untrusted_project
    out = pi(
        "-a",
        "-p",
        "--no-session",
        "--model",
        "faux/faux-1",
        "hi",
        cwd=work,
        env={"PI_TEST_MARKER": str(marker)},
    )
    assert out.returncode == 0, out.stderr
    assert marker.read_text() == "imported"


def test_plugins_lists_an_untrusted_project_extension_as_skipped(untrusted_project):
    work, marker = untrusted_project
    out = pi("plugins", "--json", cwd=work, env={"PI_TEST_MARKER": str(marker)})
    rows = {row["name"]: row for row in json.loads(out.stdout)}
    assert rows["marker"]["source"] == "project" and rows["marker"]["disabled"] is True
    assert "not trusted" in (rows["marker"]["error"] or "")
    out = pi("-a", "plugins", "--json", cwd=work, env={"PI_TEST_MARKER": str(marker)})
    rows = {row["name"]: row for row in json.loads(out.stdout)}
    assert rows["marker"]["disabled"] is False and rows["marker"]["error"] is None
    assert marker.exists()


def test_untrusted_project_settings_are_not_applied(isolated_environment):
    work = isolated_environment["work"]
    write(work / ".pi" / "settings.json", json.dumps({"disabledPlugins": ["read"], "defaultTools": ["ls"]}))
    out = pi("plugins", "--json", cwd=work)
    assert {r["name"]: r["disabled"] for r in json.loads(out.stdout)}["read"] is False
    out = pi("-a", "plugins", "--json", cwd=work)
    assert {r["name"]: r["disabled"] for r in json.loads(out.stdout)}["read"] is True


@pytest.mark.parametrize("vote, loaded", [("yes", True), ("no", False), ("undecided", False)])
def test_project_trust_vote_of_a_global_extension_decides(isolated_environment, tmp_path, vote, loaded):
    work, agent = isolated_environment["work"], isolated_environment["agent"]
    marker = tmp_path / "marker"
    write(work / ".pi" / "extensions" / "marker.py", MARKER_PLUGIN)
    write(
        agent / "extensions" / "voter.py",
        f"""
        from pi_host import hookimpl

        @hookimpl
        def on_project_trust(event):
            assert event["cwd"]
            return {{"trusted": "{vote}"}}
        """,
    )
    out = pi(
        "-p", "--no-session", "--model", "faux/faux-1", "hi", cwd=work, env={"PI_TEST_MARKER": str(marker)}
    )
    assert out.returncode == 0, out.stderr
    assert marker.exists() is loaded
    assert not (agent / "trust.json").exists()  # not remembered without "remember"


# --- ordering marks ------------------------------------------------------------------------------


def _tagger(tmp_path: Path, name: str, mark: str) -> str:
    decorator = f"@hookimpl({mark}=True)" if mark else "@hookimpl"
    return str(
        write(
            tmp_path / f"{name}.py",
            f"""
            from pi_host import hookimpl

            {decorator}
            def on_input(event):
                return {{"action": "transform", "text": event["text"] + " {name}"}}
            """,
        )
    )


def test_tryfirst_runs_first_and_trylast_last_in_load_order(tmp_path):
    files = [
        _tagger(tmp_path, "last", "trylast"),
        _tagger(tmp_path, "plain1", ""),
        _tagger(tmp_path, "first1", "tryfirst"),
        _tagger(tmp_path, "plain2", ""),
        _tagger(tmp_path, "last2", "trylast"),
        _tagger(tmp_path, "first2", "tryfirst"),
    ]
    args = [arg for path in files for arg in ("-e", path)]
    out = pi("-p", "--no-session", "--model", "faux/faux-1", *args, "hi")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "faux: hi first1 first2 plain1 plain2 last last2"


# --- wrappers and typos are rejected --------------------------------------------------------------


# One variant through the command line (the run, `pi plugins --json`, --strict-plugins); all four
# in process: tests/kernel/test_plugins.py.
@pytest.mark.parametrize(
    "source, hook, words",
    [("@hookimpl(hookwrapper=True)\ndef on_input(event):\n    yield\n", "on_input", "wrapper")],
    ids=["hookwrapper"],
)
def test_wrappers_and_unknown_hooks_are_rejected_in_one_line(tmp_path, source, hook, words):
    plugin = write(tmp_path / "odd.py", "from pi_host import hookimpl\n\n\n" + source)
    out = pi("-p", "--no-session", "--model", "faux/faux-1", "-e", str(plugin), "hi")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "faux: hi"  # the run goes on without the plugin
    [line] = lines_with(out.stderr, "'odd'")
    assert hook in line and words in line
    listing = pi("plugins", "--json", "-e", str(plugin))
    row = next(r for r in json.loads(listing.stdout) if r["name"] == "odd")
    assert row["error"] and hook in row["error"]
    strict = pi("-p", "--no-session", "--model", "faux/faux-1", "--strict-plugins", "-e", str(plugin), "hi")
    assert strict.returncode == 1 and hook in strict.stderr


def test_a_typo_gets_a_suggestion(tmp_path):
    plugin = write(
        tmp_path / "typo.py",
        "from pi_host import hookimpl\n\n\n@hookimpl\ndef on_tool_calls(event):\n    pass\n",
    )
    out = pi("plugins", "-e", str(plugin))
    assert "on_tool_call" in out.stdout and "did you mean" in out.stdout


# --- failures name the plugin and hook that failed ------------------------------------------------


def test_a_raising_tool_call_handler_is_named(tmp_path):
    plugin = write(
        tmp_path / "blocker.py",
        """
        from pi_host import hookimpl

        @hookimpl
        def on_tool_call(event):
            raise RuntimeError("guard exploded")
        """,
    )
    script = [{"toolCalls": [{"name": "ls", "arguments": {}}]}, {"text": "done: {{lastToolResult}}"}]
    out = pi(
        "-p",
        "--no-session",
        "--model",
        "faux/faux-1",
        "--tools",
        "ls",
        "-e",
        str(plugin),
        "go",
        script=script,
    )
    assert out.returncode == 0, out.stderr
    assert "guard exploded" in out.stdout  # the call was blocked with the error as its result
    [line] = lines_with(out.stderr, "guard exploded")
    assert "'blocker'" in line and "tool_call" in line and "'tool_call'" not in line


def test_a_raising_command_is_named_after_its_plugin(tmp_path):
    plugin = write(
        tmp_path / "cmds.py",
        """
        from pi_host import hookimpl
        from pi_host.plugins.registrations import Command

        def explode(args, ctx):
            raise RuntimeError("command exploded")

        @hookimpl
        def register_commands():
            return [Command(name="explode", handler=explode)]
        """,
    )
    out = pi("-p", "--no-session", "--model", "faux/faux-1", "-e", str(plugin), "/explode")
    [line] = lines_with(out.stderr, "command exploded")
    assert "'cmds'" in line and "command" in line and "'explode'" not in line


COMPACT_COMMAND = """
from pi_host import hookimpl
from pi_host.plugins.registrations import Command

async def compact_now(args, ctx):
    await ctx.compact()

@hookimpl
def register_commands():
    return [Command(name="compact-now", handler=compact_now)]
"""


def test_a_documented_cancel_is_not_a_failure(isolated_environment, tmp_path):
    write(
        isolated_environment["agent"] / "settings.json", json.dumps({"compaction": {"keepRecentTokens": 1}})
    )
    command = write(tmp_path / "compactcmd.py", COMPACT_COMMAND)
    canceller = write(
        tmp_path / "canceller.py",
        """
        from pi_host import hookimpl

        @hookimpl
        def on_session_before_compact(event):
            return {"cancel": True}
        """,
    )
    args = ["-p", "--no-session", "--model", "faux/faux-1", "--strict-plugins"]
    out = pi(*args, "-e", str(command), "-e", str(canceller), "one", "two", "/compact-now")
    assert out.returncode == 0, out.stderr
    assert "failed" not in out.stderr
    out = pi(*args, "-e", str(canceller), "one", "two", "/compact")  # pi sends it to the model
    assert out.returncode == 0, out.stderr
    assert out.stderr == "" and out.stdout.strip() == "faux: /compact"


def test_a_raising_compaction_handler_is_named(isolated_environment, tmp_path):
    write(
        isolated_environment["agent"] / "settings.json", json.dumps({"compaction": {"keepRecentTokens": 1}})
    )
    command = write(tmp_path / "compactcmd.py", COMPACT_COMMAND)
    broken = write(
        tmp_path / "brokencompact.py",
        """
        from pi_host import hookimpl

        @hookimpl
        def on_session_before_compact(event):
            raise ValueError("compaction handler exploded")
        """,
    )
    script = [{"text": "one"}, {"text": "two"}, {"text": "## Goal\nsummary"}]
    out = pi(
        "-p",
        "--no-session",
        "--model",
        "faux/faux-1",
        "-e",
        str(command),
        "-e",
        str(broken),
        "a",
        "b",
        "/compact-now",
        script=script,
    )
    [line] = lines_with(out.stderr, "compaction handler exploded")
    assert "'brokencompact'" in line and "session_before_compact" in line
    assert not lines_with(out.stderr, "'compact")[1:]  # nothing else blamed on a 'compact...' plugin


# --- one line per failure -----------------------------------------------------------------------


def test_a_repeating_failure_is_reported_once_with_a_count(tmp_path):
    plugin = write(
        tmp_path / "noisy.py",
        """
        from pi_host import hookimpl

        @hookimpl
        def on_event(event):
            raise ValueError("noisy handler")
        """,
    )
    out = pi("-p", "--no-session", "--model", "faux/faux-1", "-e", str(plugin), "hi")
    assert out.returncode == 0, out.stderr
    mentions = lines_with(out.stderr, "'noisy'")
    assert len(mentions) == 2, out.stderr
    assert "noisy handler" in mentions[0] and "event" in mentions[0]
    assert "more time" in mentions[1]


def test_an_entry_point_named_like_a_builtin_is_one_line(tmp_path):
    site = fake_distribution(
        tmp_path / "site",
        "clash-tools",
        {"read": "clash_read"},
        {"clash_read": "from pi_host import hookimpl\n"},
    )
    env = {"PYTHONPATH": str(site)}
    out = pi("-p", "--no-session", "--model", "faux/faux-1", "hi", env=env)
    assert out.returncode == 0, out.stderr
    [line] = lines_with(out.stderr, "clash-tools")
    assert "pi-host" in line and "'read'" in line
    assert len(out.stderr) < 400, out.stderr
    listing = pi("plugins", env=env)
    assert len(listing.stderr) < 400 and len(listing.stdout) < 8000


# --- declared hooks fire ------------------------------------------------------------------------

PROBE_PLUGIN = """
import json
import os

from pi_host import hookimpl
from pi_host.plugins.registrations import Command

LOG = os.environ["PI_TEST_HOOK_LOG"]


def log(name):
    with open(LOG, "a") as handle:
        handle.write(name + "\\n")


for _name in json.loads(os.environ["PI_TEST_HOOKS"]):
    def _make(name):
        def handler(event, ctx):
            log(name)
            if name == "on_project_trust":
                return {"trusted": "yes"}
        handler.__name__ = name
        return hookimpl(handler)
    globals()[_name] = _make(_name)


async def probe(args, ctx):
    await ctx.set_session_name("probed")
    session = ctx.session
    await session.set_model(session.registry.find("faux", "faux-reasoner"))
    await session.set_thinking_level("low")
    await ctx.compact()
    try:
        await ctx.compact()  # nothing new to compact: fails
    except Exception:
        pass
    first_user = next(e for e in session.store.entries() if e.get("type") == "message" and e["message"]["role"] == "user")
    await ctx.navigate_tree(first_user["id"], summarize=False)
    assert await ctx.ui.confirm("sure?") is False  # headless: the default at once, hooks around it


@hookimpl
def register_commands():
    return [Command(name="probe", handler=probe)]
"""


def test_every_declared_event_hook_fires(isolated_environment, tmp_path):
    from pi_host.plugins import hookspecs

    work, agent = isolated_environment["work"], isolated_environment["agent"]
    # Only the interactive mode has `!command` input, /new and /fork: tests/interactive fires those.
    interactive_only = {"on_user_bash", "on_session_before_switch", "on_session_before_fork"}
    interactive_only.add("on_mcp_servers_change")  # needs an MCP server: tests/mcp fires it
    declared = sorted(
        name for name in dir(hookspecs) if name.startswith("on_") and name not in interactive_only
    )
    write(agent / "extensions" / "probe.py", PROBE_PLUGIN)
    write(work / ".pi" / "settings.json", "{}")  # a protected resource: trust must be decided
    write(agent / "settings.json", json.dumps({"compaction": {"keepRecentTokens": 1}}))
    log = tmp_path / "hooks.log"
    script = [
        {"toolCalls": [{"name": "bash", "arguments": {"command": "echo hello"}}]},
        {"text": "first answer"},
        {"text": "second answer"},
        {"text": "## Goal\nthe summary"},
    ]
    out = pi(
        "-p",
        "--model",
        "faux/faux-1",
        "--tools",
        "bash",
        "start",
        "again",
        "/probe",
        cwd=work,
        script=script,
        env={"PI_TEST_HOOK_LOG": str(log), "PI_TEST_HOOKS": json.dumps(declared)},
    )
    assert out.returncode == 0, out.stderr
    fired = log.read_text().split()
    assert sorted(set(declared) - set(fired)) == [], f"declared but never fired; stderr: {out.stderr}"
    assert fired.count("on_resources_discover") == 1
    assert fired.count("on_session_start") == 1


def test_provider_hooks_fire_for_the_faux_provider(tmp_path):
    log = tmp_path / "provider.log"
    plugin = write(
        tmp_path / "provider_hooks.py",
        f"""
        import json

        from pi_host import hookimpl

        def log(*parts):
            with open({str(log)!r}, "a") as handle:
                handle.write(json.dumps(parts) + "\\n")

        @hookimpl
        def on_before_provider_headers(event):
            event["headers"]["x-test"] = "1"
            log("headers")

        @hookimpl
        def on_before_provider_request(event):
            log("request", sorted(event["payload"]))
            return {{**event["payload"], "marked": True}}

        @hookimpl
        def on_after_provider_response(event):
            log("response", event["status"], event["headers"].get("x-test"))

        @hookimpl
        def on_provider_stream_event(event):
            log("stream", event["provider"], event["api"], event["model"])
        """,
    )
    out = pi("-p", "--no-session", "--model", "faux/faux-1", "-e", str(plugin), "hi")
    assert out.returncode == 0, out.stderr
    records = [json.loads(line) for line in log.read_text().splitlines()]
    kinds = [r[0] for r in records]
    assert kinds[:3] == ["headers", "request", "response"] and "stream" in kinds[3:]
    assert {"messages", "model"} <= set(records[1][1])
    assert records[2][1:] == [200, "1"]
    assert records[3][1:] == ["faux", "faux", "faux-1"]


# --- before_agent_start returns -------------------------------------------------------------------


def test_before_agent_start_message_as_a_dict(tmp_path):
    plugin = write(
        tmp_path / "inject.py",
        """
        from pi_host import hookimpl

        @hookimpl
        def on_before_agent_start(event):
            return {"message": {"customType": "note", "content": "remember the milk", "display": True}}
        """,
    )
    out = pi("-p", "--no-session", "--model", "faux/faux-1", "-e", str(plugin), "hi")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "faux: remember the milk"


def test_before_agent_start_bad_message_is_named_and_the_prompt_runs(tmp_path):
    plugin = write(
        tmp_path / "badmsg.py",
        """
        from pi_host import hookimpl

        @hookimpl
        def on_before_agent_start(event):
            return {"message": 42}
        """,
    )
    out = pi("-p", "--no-session", "--model", "faux/faux-1", "-e", str(plugin), "hi")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "faux: hi"
    [line] = lines_with(out.stderr, "'badmsg'")
    assert "before_agent_start" in line and "message" in line


# --- settings precedence and one plugin-selection path ---------------------------------------------

FLAG_PLUGIN = """
import os
import pathlib

from pi_host import hookimpl
from pi_host.plugins.registrations import CliFlag

pathlib.Path(os.environ["PI_TEST_MARKER"]).write_text("imported")


@hookimpl
def register_cli_flags():
    return [CliFlag(name="shout-loud", description="shout")]
"""


def test_project_cannot_re_enable_what_the_user_disabled(isolated_environment, tmp_path):
    work, agent = isolated_environment["work"], isolated_environment["agent"]
    write(agent / "extensions" / "shout.py", "from pi_host import hookimpl\n")
    write(agent / "settings.json", json.dumps({"disabledPlugins": ["shout"]}))
    write(work / ".pi" / "settings.json", json.dumps({"disabledPlugins": ["ls"]}))
    out = pi("-a", "plugins", "--json", cwd=work)
    disabled = {r["name"]: r["disabled"] for r in json.loads(out.stdout)}
    assert disabled["shout"] is True and disabled["ls"] is True and disabled["read"] is False


def test_help_honours_disabled_plugins(isolated_environment, tmp_path):
    agent = isolated_environment["agent"]
    marker = tmp_path / "marker"
    write(agent / "extensions" / "loud.py", FLAG_PLUGIN)
    env = {"PI_TEST_MARKER": str(marker)}
    assert "--shout-loud" in pi("--help", env=env).stdout
    marker.unlink()
    write(agent / "settings.json", json.dumps({"disabledPlugins": ["loud"]}))
    out = pi("--help", env=env)
    assert out.returncode == 0 and "--shout-loud" not in out.stdout
    assert not marker.exists()


def test_disable_by_distribution_name_and_unknown_names(isolated_environment, tmp_path):
    agent = isolated_environment["agent"]
    site = fake_distribution(
        tmp_path / "site",
        "word-tools",
        {"wc": "word_tools"},
        {"word_tools": "from pi_host import hookimpl\n"},
    )
    env = {"PYTHONPATH": str(site)}
    write(agent / "settings.json", json.dumps({"disabledPlugins": ["word-tools", "no-such-plugin"]}))
    out = pi("plugins", "--json", env=env)
    assert {r["name"]: r["disabled"] for r in json.loads(out.stdout)}["wc"] is True
    [line] = lines_with(out.stderr, "no-such-plugin")
    assert "disabledPlugins" in line
    run = pi("-p", "--no-session", "--model", "faux/faux-1", "hi", env=env)
    assert run.returncode == 0 and len(lines_with(run.stderr, "no-such-plugin")) == 1


# --- unknown options and subcommands ---------------------------------------------------------------


def test_unknown_option_is_an_error_not_a_prompt(isolated_environment):
    agent = isolated_environment["agent"]
    for args in (("-p", "--bogus", "hi"), ("-p", "-z", "hi"), ("--bogus",)):
        out = pi(*args, "--model", "faux/faux-1")
        assert out.returncode == 1, (args, out.stdout, out.stderr)
        assert f"Unknown option: {args[1] if len(args) > 1 else args[0]}" in out.stderr
        assert out.stdout == ""
    assert not (agent / "sessions").exists()


@pytest.mark.parametrize("args", [("config",), ("-a", "config")])  # mcp: issue 18; auth: issue 32
def test_pi_subcommands_not_yet_available_say_so(isolated_environment, args):
    out = pi(*args)
    assert out.returncode == 1
    [line] = out.stderr.strip().splitlines()
    name = args[1] if args[0] == "-a" else args[0]
    assert name in line and "not available" in line
    assert out.stdout == "" and not (isolated_environment["agent"] / "sessions").exists()


def test_known_subcommand_after_options_runs(isolated_environment):
    out = pi("-a", "plugins")
    assert out.returncode == 0 and "read" in out.stdout and "[builtin]" in out.stdout
    assert not (isolated_environment["agent"] / "sessions").exists()


# --- modes ----------------------------------------------------------------------------------------


def test_unknown_mode_lists_the_installed_ones():
    out = pi("--mode", "bogus", "--model", "faux/faux-1", "hi")
    assert out.returncode == 1
    [line] = out.stderr.strip().splitlines()
    assert "bogus" in line and "json" in line and "text" in line
    assert out.stdout == ""


def test_a_third_party_mode_is_selectable_by_name(tmp_path):
    plugin = write(
        tmp_path / "shoutmode.py",
        """
        from pi_host import hookimpl
        from pi_host.plugins.registrations import Mode

        async def run(request):
            for prompt in request.prompts:
                await request.session.prompt(prompt)
            request.stdout.write(request.session.last_assistant().text().upper() + "\\n")
            return 0

        @hookimpl
        def register_modes():
            return [Mode(name="shout", run=run)]
        """,
    )
    out = pi("--mode", "shout", "--no-session", "--model", "faux/faux-1", "-e", str(plugin), "hi")
    assert out.returncode == 0, out.stderr
    assert out.stdout == "FAUX: HI\n"


def test_a_raising_compaction_strategy_is_named(isolated_environment, tmp_path):
    write(
        isolated_environment["agent"] / "settings.json", json.dumps({"compaction": {"keepRecentTokens": 1}})
    )
    strategy = write(
        tmp_path / "badstrategy.py",
        """
        from pi_host import CompactionStrategy, hookimpl

        async def summarize(preparation, ctx):
            raise RuntimeError("strategy exploded")

        @hookimpl
        def register_compaction_strategies():
            return [CompactionStrategy(name="bad", summarize=summarize)]
        """,
    )
    command = write(tmp_path / "compactcmd.py", COMPACT_COMMAND)
    out = pi(
        "-p",
        "--no-session",
        "--model",
        "faux/faux-1",
        "-e",
        str(strategy),
        "-e",
        str(command),
        "a",
        "b",
        "/compact-now",
    )
    assert out.returncode == 0, out.stderr
    [line] = lines_with(out.stderr, "'badstrategy'")
    assert "summarize" in line and "strategy exploded" in line
