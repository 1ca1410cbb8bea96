"""Loading the provider catalogs shipped as JSON data files beside this module."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

CATALOG_DIR = Path(__file__).with_name("catalog")


def provider_infos(directory: Path = CATALOG_DIR) -> list[Any]:
    """One :class:`ProviderInfo` per ``catalog/*.json`` file (sorted by file name)."""
    from pi_host.plugins.registrations import ProviderInfo

    infos = []
    for path in sorted(directory.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        infos.append(
            ProviderInfo(
                id=data["id"],
                api=data.get("api", ""),
                base_url=data.get("baseUrl", ""),
                env_keys=list(data.get("envKeys") or ()),
                models=list(data.get("models") or ()),
                headers=data.get("headers"),
                compat=data.get("compat"),
                needs_key=data.get("needsKey", True),
                default_model=data.get("defaultModel"),
                rank=data.get("rank", 100),
            )
        )
    return infos
