"""Resources only: the skill, prompt template and theme in the folders next to this file.

``Resources(root)`` with no lists means the conventional ``skills/``, ``prompts/`` and
``themes/`` folders under ``root``; hatchling puts them into the wheel with the module.
"""

from pathlib import Path

from pi_host import hookimpl
from pi_host.plugins.registrations import Resources

__version__ = "0.1.0"


@hookimpl
def register_resources():
    return [Resources(root=str(Path(__file__).parent))]
