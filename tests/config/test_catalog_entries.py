"""CatalogEntries: a lazy provider's entries are built on first read, in catalog order."""

from __future__ import annotations

from pi_host.config.catalog_entries import CatalogEntries


def test_keys_are_known_before_anything_is_built():
    built = []
    entries = CatalogEntries()
    entries[("eager", "a")] = {"id": "a"}
    entries.add_lazy("lazy", ["x", "y"], lambda: built.append(1) or [{"id": "x"}, {"id": "y"}])
    assert (
        ("lazy", "y") in entries and len(entries) == 3 and list(entries)[1:] == [("lazy", "x"), ("lazy", "y")]
    )
    assert built == [] and entries.pending() == {"lazy"}
    assert entries[("lazy", "y")] == {"id": "y"} and built == [1]
    entries[("lazy", "x")]
    assert built == [1]  # built once


def test_a_written_entry_wins_over_the_catalogs_own():
    entries = CatalogEntries()
    entries.add_lazy("p", ["m"], lambda: [{"id": "m", "v": "catalog"}])
    entries[("p", "m")] = {"id": "m", "v": "models.json"}
    entries[("p", "new")] = {"id": "new"}
    assert [d["v"] for d in entries.values() if "v" in d] == ["models.json"]
    assert list(entries) == [("p", "m"), ("p", "new")]


def test_an_id_the_file_does_not_have_is_dropped_when_it_is_read():
    entries = CatalogEntries()
    entries.add_lazy("p", ["gone", "kept"], lambda: [{"id": "kept"}])
    assert ("p", "gone") in entries
    assert entries.values() == [{"id": "kept"}]
    assert ("p", "gone") not in entries and len(entries) == 1
