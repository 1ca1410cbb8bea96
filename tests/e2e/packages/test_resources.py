"""Packages carry resources: skills, prompt templates and themes a plugin declares with
``register_resources`` (or a pi-package folder the ``packages`` setting names) are found like the
agent dir's, after the settings' paths, narrowed by pi's filter objects; and, at the user's
boundary, an installed ``extension_examples/pi-resource-pack`` shows in ``pi list`` /
``pi plugins``, the system prompt, ``/`` commands and the theme lookup."""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.support.paths import DOCS
from tests.support.pi import run_pi

THEME = {"name": "dusk", "appearance": "dark", "colors": {"accent": "#c792ea"}}


def skill(directory: Path, name: str, description: str = "does things") -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "SKILL.md"
    path.write_text(f"---\nname: {name}\ndescription: {description}\n---\nbody of {name}\n")
    return path


def make_pack(root: Path) -> Path:
    """A package folder with the conventional skills/, prompts/ and themes/ folders."""
    skill(root / "skills" / "alpha", "alpha", "the package's alpha")
    skill(root / "skills" / "beta", "beta")
    (root / "prompts").mkdir(parents=True)
    (root / "prompts" / "review.md").write_text("---\ndescription: Review\n---\nReview $1 now\n")
    (root / "prompts" / "summary.md").write_text("Summarise $@\n")
    (root / "themes").mkdir()
    (root / "themes" / "dusk.json").write_text(json.dumps(THEME))
    (root / "themes" / "dawn.json").write_text(json.dumps({**THEME, "name": "dawn", "appearance": "light"}))
    return root


def names(paths: list[str]) -> list[str]:
    return sorted(Path(p).parent.name if p.endswith("SKILL.md") else Path(p).name for p in paths)


def write_settings(directory: Path, data: dict) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "settings.json").write_text(json.dumps(data))


# --- unit: what a package ships and how filters narrow it ---------------------------------------


def system_sections(records) -> dict:
    return next(
        r["message"]["sections"]
        for r in records
        if r.get("type") == "message_start" and r["message"]["role"] == "system"
    )


def test_the_documented_example_ships_its_folders(isolated_environment, tmp_path):
    doc = (DOCS / "packages.md").read_text()
    section = doc[doc.index("## Packages carry resources") :]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    package = tmp_path / "doc_pack"
    package.mkdir()
    (package / "__init__.py").write_text(code)
    skill(package / "skills" / "doc-skill", "doc-skill", "from the documented example")
    out = run_pi(
        "-e",
        str(package),
        "--model",
        "faux/faux-1",
        "--no-session",
        "--mode",
        "json",
        "hi",
        cwd=isolated_environment["work"],
    )
    assert out.returncode == 0, out.stderr
    records = [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]
    assert "<name>doc-skill</name>" in system_sections(records)["skills"]


def test_a_pi_package_folder_in_settings_is_listed_and_its_template_expands(isolated_environment, tmp_path):
    folder = make_pack(tmp_path / "shared-pi-package")
    (folder / "extensions").mkdir()
    (folder / "extensions" / "tool.ts").write_text("export default () => {}")
    write_settings(isolated_environment["agent"], {"packages": [str(folder)]})
    # No Node.js to be found: the package's TypeScript extension is one line naming the package
    # (with Node >= 22.19 the ts-bridge plugin loads it: tests/e2e/ts_bridge/); its resources load.
    no_node = {"PATH": str(tmp_path / "empty-bin"), "PI_HOST_NODE": ""}
    listed = run_pi("list", cwd=isolated_environment["work"], env=no_node)
    assert f"{folder} -  [settings]" in listed.stdout.splitlines()
    assert "    prompts: /review, /summary" in listed.stdout.splitlines()
    [warning] = listed.stderr.splitlines()
    assert "'shared-pi-package'" in warning and "Node.js >= 22.19" in warning
    out = run_pi(
        "--model", "faux/faux-1", "--no-session", "-p", "/review main.py", cwd=isolated_environment["work"]
    )
    assert out.returncode == 0, out.stderr
    assert "faux: Review main.py now" in out.stdout
