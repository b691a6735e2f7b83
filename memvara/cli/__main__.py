"""``python -m memvara.cli``: the ``memvara`` command."""

from __future__ import annotations

from ._app import main

if __name__ == "__main__":
    raise SystemExit(main())
