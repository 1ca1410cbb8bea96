"""The single source of the pi-host version (read without importing anything heavy)."""

__version__ = "0.1.0"
