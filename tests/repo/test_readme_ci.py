"""The README's first commands are the ones CI runs."""

from tests.support.paths import REPO

ROOT = REPO


def test_ci_runs_the_readme_commands_verbatim():
    readme = (ROOT / "README.md").read_text().splitlines()
    fence = readme.index("```")
    install, tests = readme[fence + 1], readme[fence + 2]
    assert readme[fence + 3] == "```"
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert install in ci and tests in ci
    assert ci.index(install) < ci.index(tests)
    assert "pip install" in install and "pytest" in tests
