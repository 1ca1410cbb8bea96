"""Project trust decisions (reference §8.7)."""

from __future__ import annotations

import json
import os

from pi_host.config import trust


def make_project(work):
    (work / ".pi" / "skills").mkdir(parents=True)
    (work / ".pi" / "settings.json").write_text("{}")
    return work


def set_policy(agent, policy):
    (agent / "settings.json").write_text(json.dumps({"defaultProjectTrust": policy}))


def test_directory_without_protected_resources_is_trusted(isolated_environment):
    work = isolated_environment["work"]
    (work / "AGENTS.md").write_text("context files are not protected")
    decision = trust.decide_trust(str(work))
    assert decision.trusted and decision.skipped == [] and decision.message() is None


def test_ask_skips_in_print_json_and_rpc_modes(isolated_environment):
    work = make_project(isolated_environment["work"])
    for mode in ("print", "json", "rpc"):
        decision = trust.decide_trust(str(work), None, can_ask=mode in ("tui", "interactive"))
        assert not decision.trusted and not decision.ask
        assert decision.reason == "defaultProjectTrust=ask"
        assert decision.skipped == [".pi/settings.json", ".pi/skills"]
    line = trust.decide_trust(str(work)).message()
    assert ".pi/settings.json" in line and ".pi/skills" in line and "--approve" in line


def test_ask_in_interactive_mode_requests_a_prompt(isolated_environment):
    work = make_project(isolated_environment["work"])
    decision = trust.decide_trust(str(work), None, can_ask=True)
    assert decision.ask and not decision.trusted


def test_approve_flags_win_over_everything(isolated_environment):
    agent, work = isolated_environment["agent"], make_project(isolated_environment["work"])
    set_policy(agent, "never")
    trust.save_trust_decision(str(work), False)
    assert trust.decide_trust(str(work), True).trusted
    decision = trust.decide_trust(str(work), False)
    assert not decision.trusted and decision.reason == "--no-approve"


def test_extension_vote_comes_before_saved_decisions(isolated_environment):
    work = make_project(isolated_environment["work"])
    trust.save_trust_decision(str(work), False)
    decision = trust.decide_trust(str(work), None, vote=lambda: True)
    assert decision.trusted and decision.reason == "extension"


def test_closest_saved_decision_wins(isolated_environment):
    work = isolated_environment["work"]
    project = work / "repo" / "sub"
    make_project(project)
    trust.save_trust_decision(str(work), False)
    trust.save_trust_decision(str(work / "repo"), True)
    decision = trust.decide_trust(str(project))
    assert (
        decision.trusted and decision.reason.startswith("saved for") and str(work / "repo") in decision.reason
    )
    trust.save_trust_decision(str(project), False)
    assert not trust.decide_trust(str(project)).trusted


def test_saved_decision_comes_before_default_policy(isolated_environment):
    agent, work = isolated_environment["agent"], make_project(isolated_environment["work"])
    set_policy(agent, "always")
    trust.save_trust_decision(str(work), False)
    assert not trust.decide_trust(str(work)).trusted


def test_default_policy_always_and_never(isolated_environment):
    agent, work = isolated_environment["agent"], make_project(isolated_environment["work"])
    set_policy(agent, "always")
    assert trust.decide_trust(str(work)).trusted
    set_policy(agent, "never")
    decision = trust.decide_trust(str(work), None, can_ask=True)
    assert not decision.trusted and not decision.ask


def test_trust_file_is_pis_flat_layout_and_keeps_foreign_keys(isolated_environment):
    agent, work = isolated_environment["agent"], isolated_environment["work"]
    (agent / "trust.json").write_text(json.dumps({"/elsewhere": True, "version": 7}))
    trust.save_trust_decision(str(work), True)
    data = json.loads((agent / "trust.json").read_text())
    assert data == {"/elsewhere": True, "version": 7, os.path.realpath(work): True}
    trust.save_trust_decision(str(work), False)
    assert json.loads((agent / "trust.json").read_text())[os.path.realpath(work)] is False


def test_nested_trust_file_layout_is_read(isolated_environment):
    agent, work = isolated_environment["agent"], make_project(isolated_environment["work"])
    (agent / "trust.json").write_text(json.dumps({"projects": {str(work): {"trusted": True}}}))
    assert trust.decide_trust(str(work)).trusted


def test_decision_saved_for_the_real_path_applies_through_a_symlink(isolated_environment, tmp_path):
    real = make_project(tmp_path / "real")
    link = tmp_path / "link"
    os.symlink(real, link)
    trust.save_trust_decision(str(link), True)
    assert json.loads((isolated_environment["agent"] / "trust.json").read_text()) == {str(real): True}
    assert trust.decide_trust(str(link)).trusted


def test_agents_skills_in_ancestors_up_to_git_root_are_protected(isolated_environment):
    work = isolated_environment["work"]
    repo = work / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / ".agents" / "skills").mkdir(parents=True)
    (work / ".agents" / "skills").mkdir(parents=True)  # above the git root: not considered
    cwd = repo / "pkg"
    cwd.mkdir()
    decision = trust.decide_trust(str(cwd))
    assert decision.skipped == ["../.agents/skills"]


def test_user_home_agents_skills_is_not_a_project_resource(isolated_environment):
    home = isolated_environment["home"]
    (home / ".agents" / "skills").mkdir(parents=True)
    (home / ".git").mkdir()
    project = home / "proj"
    project.mkdir()
    assert trust.decide_trust(str(project)).trusted
