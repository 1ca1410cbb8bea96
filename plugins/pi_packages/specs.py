"""Package specs: what ``pi install`` accepts and hands to pip.

A spec comes from the command line or from a manifest, and a project's manifest comes from
whoever wrote the repository: so a spec is checked before pip sees it (:func:`spec_problem`), and
pip is always given it after ``--`` (or as ``--editable=<spec>``), never where it could be read as
an option such as ``-e`` or ``--index-url``.
"""

from __future__ import annotations

import os
import re

ARCHIVE = re.compile(r"\.(whl|zip|tar\.gz|tgz|tar\.bz2|tar)(#.*)?$")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def spec_problem(spec: object) -> str | None:
    """Why ``spec`` is not something to give pip as a package, or None when it is."""
    if not isinstance(spec, str) or not spec.strip():
        return "a package spec must be a non-empty string"
    if spec.lstrip().startswith("-"):
        return (
            "a package spec cannot begin with '-' (pip would read it as an option); write a path as ./-name"
        )
    if _CONTROL.search(spec):
        return "a package spec cannot hold control characters (a line break, a tab...)"
    return None


def normalise_spec(spec: str, cwd: str) -> str:
    """What pip is given and the manifest records: an absolute path for a local path, a
    ``git+`` URL for pi's ``git:`` sources and bare repository URLs, else the requirement."""
    if spec.startswith("git:") and not spec.startswith("git://"):
        return "git+https://" + spec[4:]
    if spec.startswith(("https://", "http://", "ssh://")) and not ARCHIVE.search(spec):
        return "git+" + spec
    if spec.startswith(("git+", "git://")) or "://" in spec or " @ " in spec:
        return spec
    looks_like_path = spec.startswith((".", "/", "~")) or os.sep in spec or ARCHIVE.search(spec)
    if looks_like_path or os.path.exists(os.path.join(cwd, spec)):
        return os.path.abspath(os.path.join(cwd, os.path.expanduser(spec)))
    return spec


def pip_install_args(spec: str, editable: bool) -> list[str]:
    """The end of a ``pip install`` command line for ``spec``: it can only be read as a package."""
    return [f"--editable={spec}"] if editable else ["--", spec]
