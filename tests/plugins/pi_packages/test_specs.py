"""What ``pi install`` accepts, in process: specs are recorded as pip reads them, npm sources go
to npm (pi's TypeScript packages, plugins/pi_packages/npm.py). (The real ``pi install`` of a throw-away environment is in
``tests/e2e/venvs/test_packages.py``.)"""

from __future__ import annotations


def test_specs_are_recorded_as_pip_reads_them(tmp_path):
    from pi_packages.commands import normalise_spec

    (tmp_path / "local-plugin").mkdir()
    assert normalise_spec("local-plugin", str(tmp_path)) == str(tmp_path / "local-plugin")
    assert normalise_spec("./x", str(tmp_path)) == str(tmp_path / "x")
    assert normalise_spec("git:github.com/me/t@v1", "/") == "git+https://github.com/me/t@v1"
    assert normalise_spec("https://github.com/me/t", "/") == "git+https://github.com/me/t"
    assert normalise_spec("https://example.org/t-1.0.tar.gz", "/") == "https://example.org/t-1.0.tar.gz"
    assert normalise_spec("pi-tools>=1.2", str(tmp_path)) == "pi-tools>=1.2"


def test_npm_sources_go_to_npm_never_to_pip(monkeypatch, capsys):
    from pi_packages import commands, npm

    seen = []
    monkeypatch.setattr(npm, "install", lambda spec, path, extra, verbose, say: seen.append(spec) or True)
    monkeypatch.setattr(commands, "_install_one", lambda *a: (_ for _ in ()).throw(AssertionError("pip")))
    assert cmd_install(["npm:@example/pi-tools"]) == 0
    assert seen == ["npm:@example/pi-tools"]


def test_an_npm_spec_that_is_an_option_is_refused_in_one_line(capsys):
    assert cmd_install(["npm:--global"]) == 1
    err = capsys.readouterr().err
    assert err == "pi: refusing 'npm:--global': not an npm package name\n"


def cmd_install(argv):
    from pi_packages.commands import cmd_install as run

    return run(argv)
