"""Start-up cost of context discovery (issue: context and configuration).

Builds a 20-level-deep project with an AGENTS.md every few levels, 150 skills (user dir, project
.pi/skills, .agents/skills at several levels up to the git root, with an ignore file) and 40
prompt templates, then times a cold discovery (AGENTS.md + skills + templates + the skills
section) and the whole ``AgentSession.build_sections()``. Baseline, measured in the same run: the
same discovery in an empty one-level directory. Module imports (PyYAML, pydantic) are paid once
per process and reported separately.

    .venv/bin/python bench/context_discovery.py
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import tempfile
import time

RUNS = 31


def build_tree(root: str) -> tuple[str, str]:
    agent = os.path.join(root, "agent")
    repo = os.path.join(root, "repo")
    os.makedirs(os.path.join(repo, ".git"))
    cwd = repo
    for level in range(20):
        cwd = os.path.join(cwd, f"level{level:02d}")
        os.makedirs(cwd)
        if level % 4 == 0:
            with open(os.path.join(cwd, "AGENTS.md"), "w") as handle:
                handle.write(f"Rules for level {level}.\n" * 5)
        if level % 5 == 0:
            for i in range(10):
                write_skill(os.path.join(cwd, ".agents", "skills", f"lvl{level}-skill-{i}"))
    with open(os.path.join(repo, "AGENTS.md"), "w") as handle:
        handle.write("Repository rules.\n")
    for i in range(80):
        write_skill(os.path.join(agent, "skills", f"group{i % 8}", f"user-skill-{i}"))
    with open(os.path.join(agent, "skills", ".gitignore"), "w") as handle:
        handle.write("group7/\n")
    for i in range(30):
        write_skill(os.path.join(cwd, ".pi", "skills", f"project-skill-{i}"))
    os.makedirs(os.path.join(agent, "prompts"))
    os.makedirs(os.path.join(cwd, ".pi", "prompts"))
    for i in range(20):
        for prefix, base in (
            ("tpl", os.path.join(agent, "prompts")),
            ("ptpl", os.path.join(cwd, ".pi", "prompts")),
        ):
            with open(os.path.join(base, f"{prefix}{i}.md"), "w") as handle:
                handle.write(
                    f"---\ndescription: Template {i}\nargument-hint: <file>\n---\nDo $1 with ${{@:2}}.\n"
                )
    return agent, cwd


def write_skill(directory: str) -> None:
    os.makedirs(directory)
    name = os.path.basename(directory)
    with open(os.path.join(directory, "SKILL.md"), "w") as handle:
        handle.write(
            f"---\nname: {name}\ndescription: Handles {name} tasks, with enough words to look real.\n"
            "license: MIT\nmetadata:\n  version: 1\n---\n# Instructions\n\nStep one.\nStep two.\n"
        )


def discovery(agent: str, home: str, cwd: str, cached: bool = True) -> tuple[int, int, int]:
    from pi_context_agents_files.discovery import discover as discover_files
    from pi_context_agents_files.discovery import render
    from pi_context_skills.discovery import Locations as SkillLocations
    from pi_context_skills.discovery import discover as discover_skills
    from pi_context_skills.render import skills_section
    from pi_context_templates.templates import Locations as TemplateLocations
    from pi_context_templates.templates import discover as discover_templates

    files = discover_files(agent, cwd)
    render(files)
    from pi_context_skills.cache import SkillCache

    cache = SkillCache() if cached else None
    skills = discover_skills(SkillLocations(agent_dir=agent, home=home, cwd=cwd), cache).skills
    skills_section(skills, "read")
    from pi_host.lib.frontmatter import StatCache

    template_cache = StatCache("prompt-templates") if cached else None
    templates = discover_templates(TemplateLocations(agent_dir=agent, cwd=cwd), template_cache).templates
    return len(files), len(skills), len(templates)


def median_ms(fn, runs: int = RUNS) -> float:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


def main() -> None:
    start = time.perf_counter()
    import pathspec  # noqa: F401  (only imported when an ignore file exists)
    import yaml  # noqa: F401

    import pi_host.lib.frontmatter  # noqa: F401

    yaml_ms = (time.perf_counter() - start) * 1000
    with tempfile.TemporaryDirectory() as root:
        home = os.path.join(root, "home")
        os.makedirs(home)
        os.environ["HOME"] = home
        agent, cwd = build_tree(root)
        os.environ["PI_CODING_AGENT_DIR"] = agent
        os.environ["PI_HOST_CACHE_DIR"] = os.path.join(root, "cache")
        empty_agent = os.path.join(root, "empty-agent")
        empty_cwd = os.path.join(root, "empty")
        os.makedirs(empty_agent)
        os.makedirs(empty_cwd)

        files, skills, templates = discovery(agent, home, cwd)
        deep = median_ms(lambda: discovery(agent, home, cwd))
        cold = median_ms(lambda: discovery(agent, home, cwd, cached=False))
        base = median_ms(lambda: discovery(empty_agent, home, empty_cwd))

        from pi_context_skills.source import forget as forget_skills
        from pi_context_templates.source import forget as forget_templates

        import pi_host

        async def session_build() -> float:
            session = await pi_host.create_session(model="faux/faux-1", cwd=cwd)
            templates = next(s for s in session.context_sources if s.name == "prompt-templates")
            samples = []
            for _ in range(RUNS):
                forget_skills(session)
                forget_templates(session)
                t0 = time.perf_counter()
                await session.build_sections()
                await templates.expand_input("/tpl1 a b", session.ctx)
                samples.append((time.perf_counter() - t0) * 1000)
            return statistics.median(samples)

        stderr = sys.stderr
        sys.stderr = open(os.devnull, "w")  # noqa: SIM115 - silence skill warnings during timing
        try:
            full = asyncio.run(session_build())
        finally:
            sys.stderr.close()
            sys.stderr = stderr

    print(
        f"tree: 20 levels, {files} context files, {skills} skills, {templates} templates (median of {RUNS})"
    )
    print(f"context discovery, deep project      : {deep:7.2f} ms  (parse caches warm: the normal start)")
    print(f"context discovery, no parse caches   : {cold:7.2f} ms  (first start, or every file edited)")
    print(f"context discovery, empty dir baseline: {base:7.2f} ms")
    print(f"ratio deep / baseline                : {deep / base:7.1f}x")
    print(f"session.build_sections() + template  : {full:7.2f} ms  (session caches cleared, all sources)")
    print(f"one-time import of PyYAML + pathspec : {yaml_ms:7.2f} ms")
    print("target: < 20 ms for discovery ->", "OK" if deep < 20 else "OVER")


if __name__ == "__main__":
    main()
