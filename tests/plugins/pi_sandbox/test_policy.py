"""The sandbox policy from the flag and the two settings files: a project may only make it
stricter; what the model is told; which backend a machine gets, and the one line when none."""

from __future__ import annotations

import os

from pi_sandbox.launch import Capabilities
from pi_sandbox.policy import build_policy, describe, prepare_protected
from pi_sandbox.probe import backend_for


def policy(tmp_path, flag=None, user=None, project=None):
    (tmp_path / "proj").mkdir(exist_ok=True)
    return build_policy(
        flag, user or {}, project, str(tmp_path / "proj"), str(tmp_path / "agent"), str(tmp_path)
    )


def test_off_by_default_and_the_flag_wins_over_the_settings(tmp_path):
    assert policy(tmp_path).mode == "off"
    assert policy(tmp_path, user={"mode": "read-only"}).mode == "read-only"
    assert policy(tmp_path, flag="workspace-write", user={"mode": "read-only"}).mode == "workspace-write"


def test_a_project_can_tighten_but_never_loosen(tmp_path):
    user = {"mode": "workspace-write", "network": [443, 8080]}
    tighter = policy(tmp_path, user=user, project={"mode": "read-only", "network": [8080, 9000]})
    assert (tighter.mode, tighter.network, tighter.ports) == ("read-only", "ports", [8080])
    looser = policy(tmp_path, user=user, project={"mode": "off", "network": "on", "writableRoots": ["/"]})
    assert (looser.mode, looser.network, looser.ports) == ("workspace-write", "ports", [443, 8080])
    assert "/" not in looser.writable_roots
    assert any("only make the sandbox stricter" in p for p in looser.problems)
    assert any("writableRoots from the project" in p for p in looser.problems)


def test_writable_roots_protected_paths_and_temp(tmp_path):
    proj = os.path.realpath(tmp_path / "proj")
    p = policy(tmp_path, flag="workspace-write", user={"writableRoots": ["~/cache"], "writableTemp": False})
    assert p.writable_roots[0] == proj and "/tmp" not in p.writable_roots
    assert os.path.realpath(tmp_path / "cache") in p.writable_roots
    assert os.path.join(proj, ".pi") in p.protected and str(tmp_path / "agent") in p.protected
    assert p.is_writable(os.path.join(proj, "src", "a.py"))
    assert not p.is_writable(os.path.join(proj, ".pi", "settings.json"))
    assert not p.is_writable("/etc/passwd")
    (tmp_path / "proj" / "out").symlink_to("/etc")
    assert not p.is_writable(os.path.join(proj, "out", "passwd"))  # symlinks are resolved
    assert not policy(tmp_path, flag="read-only").is_writable(os.path.join(proj, "a.py"))


def test_missing_protected_folders_are_created_empty(tmp_path):
    p = policy(tmp_path, flag="workspace-write")
    found = prepare_protected(p)
    for name in (".pi", ".claude", ".codex"):
        assert (tmp_path / "proj" / name).is_dir() and not any((tmp_path / "proj" / name).iterdir())
        assert os.path.realpath(tmp_path / "proj" / name) in found
    assert not (tmp_path / "proj" / ".git").exists()  # a repository is never created


def test_the_model_is_told_the_rules(tmp_path):
    text = describe(policy(tmp_path, flag="workspace-write", user={"network": [443]}), "landlock")
    assert "OS sandbox (workspace-write, landlock)" in text and "ports 443" in text and ".pi" in text
    assert "No command may write files" in describe(policy(tmp_path, flag="read-only"), "bwrap")


def test_backend_choice_and_the_unavailable_lines():
    linux = Capabilities(landlock_abi=4, namespaces=True, bwrap="/usr/bin/bwrap")
    assert backend_for(linux, "auto") == ("landlock", None)
    assert backend_for(linux, "bwrap") == ("bwrap", None)
    old_kernel = Capabilities(landlock_abi=0, bwrap="/usr/bin/bwrap")
    assert backend_for(old_kernel, "auto") == ("bwrap", None)
    backend, why = backend_for(Capabilities(), "auto")
    assert (
        backend == "none" and why.startswith("not available on this kernel") and "install bubblewrap" in why
    )
    backend, why = backend_for(Capabilities(platform="macOS"), "auto")
    assert (backend, why) == (
        "none",
        "not available on macOS (the sandbox uses Linux's Landlock or bubblewrap)",
    )
