"""``python -m snarl``: the same as the ``snarl`` command."""

from snarl.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
