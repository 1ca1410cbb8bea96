"""Reading an exported page (or Chromium's dump of it) with the stdlib HTML parser."""

from __future__ import annotations

from html.parser import HTMLParser

VOID = {"meta", "img", "input", "br", "hr", "link", "source", "area", "base", "col", "embed", "wbr"}


class _Collector(HTMLParser):
    """Element ids (``e-<key>``) inside the element with id ``container``, in document order."""

    def __init__(self, container: str) -> None:
        super().__init__()
        self.container = container
        self.depth = 0
        self.ids: list[str] = []
        self.attrs_of_container: dict[str, str | None] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if self.depth:
            if tag not in VOID:
                self.depth += 1
            if (found.get("id") or "").startswith("e-"):
                self.ids.append(found["id"][2:])
        elif found.get("id") == self.container:
            self.depth = 1
            self.attrs_of_container = found

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self.depth and (dict(attrs).get("id") or "").startswith("e-"):
            self.ids.append(dict(attrs)["id"][2:])

    def handle_endtag(self, tag: str) -> None:
        if self.depth and tag not in VOID:
            self.depth -= 1


def entry_ids(page: str, container: str) -> list[str]:
    parser = _Collector(container)
    parser.feed(page)
    return parser.ids


def container_attrs(page: str, container: str) -> dict[str, str | None]:
    parser = _Collector(container)
    parser.feed(page)
    return parser.attrs_of_container


def section(page: str, element_id: str) -> str:
    """The raw markup of the element with this id (start tag to its matching end tag)."""
    start = page.index(f'id="{element_id}"')
    start = page.rindex("<", 0, start)
    tag = page[start + 1 : page.index(" ", start)]
    depth, position = 0, start
    while True:
        opening = page.find(f"<{tag}", position + 1)
        closing = page.find(f"</{tag}>", position + 1)
        if opening != -1 and opening < closing:
            depth += 1
            position = opening
        elif depth:
            depth -= 1
            position = closing
        else:
            return page[start : closing + len(f"</{tag}>")]
