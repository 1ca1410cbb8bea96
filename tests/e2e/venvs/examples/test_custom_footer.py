"""pi-custom-footer: a one-line footer and a bash renderer built on ``pi_host.lib.render`` only.
Drawn directly, then installed by the real ``pi install`` and seen in a real terminal."""

from __future__ import annotations

import json

from tests.support.venv import make_venv, pi_install_example, venv_pi

# --- the footer -----------------------------------------------------------------------------


def test_installed_by_pi_install_it_is_listed_and_a_print_run_is_unchanged(tmp_path, isolated_environment):
    venv = make_venv(tmp_path / "venv")
    installed = pi_install_example("pi-custom-footer", venv)
    assert installed.stdout.splitlines() == ["Installed pi-custom-footer 0.1.0 (provides: custom-footer)"]
    listed = venv_pi(venv, "list").stdout.splitlines()
    assert listed[0] == "pi-custom-footer 0.1.0  [user]"
    assert "    pi_host: custom-footer = pi_custom_footer" in listed
    rows = {row["name"]: row for row in json.loads(venv_pi(venv, "plugins", "--json").stdout)}
    assert rows["custom-footer"]["source"] == "installed" and rows["custom-footer"]["error"] is None
    assert {"register_renderers", "on_turn_start", "on_tool_execution_end"} <= set(
        rows["custom-footer"]["hooks"]
    )
    script = json.dumps(
        [{"toolCalls": [{"name": "bash", "arguments": {"command": "exit 3"}}]}, {"text": "ok"}]
    )
    run = venv_pi(venv, "-p", "--model", "faux/faux-1", "go", PI_FAUX_SCRIPT=script)
    assert (run.returncode, run.stdout, run.stderr) == (0, "ok\n", "")
