"""``python -m memvara.server``: the ``memvara-mcp`` server."""

from __future__ import annotations

from ._app import main

if __name__ == "__main__":
    raise SystemExit(main())
