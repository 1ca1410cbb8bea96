"""``python -m pi_host`` is the same program as ``pi``."""

from pi_host.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
