"""Lazy re-exports for package ``__init__`` modules: a name is imported on first use, so importing
a package stays as cheap as importing its smallest module (``pi --version``, plugin modules)."""


def lazy_exports(package: str, table: dict[str, str]) -> object:
    """A module ``__getattr__`` serving ``table`` (name -> module path, relative ``.x`` to
    ``package``); the value found is cached in the package's namespace."""
    import sys

    def __getattr__(name: str) -> object:  # noqa: N807 (the module hook's own name)
        module = table.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        import importlib

        value = getattr(importlib.import_module(package + module if module.startswith(".") else module), name)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__
