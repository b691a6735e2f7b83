"""``memvara-mcp``: memvara as memory for any MCP client (Claude Desktop, Cursor, ...).

MCP over standard input and output (JSON-RPC 2.0, one message a line), written against
the wire format so that memvara still needs nothing but numpy. Eight tools, none of which
erases; the store and the scope come from the environment (``MEMVARA_DB``,
``MEMVARA_TENANT``/``USER``/``AGENT``/``SESSION``), never from a tool's arguments.

An edge of the package: it uses memvara's public API only, as a user's program would.
``python -m memvara.server`` runs it too.
"""

from __future__ import annotations

from ._app import CONFIG, main
from ._protocol import PROTOCOL_VERSIONS, Session
from ._tools import TOOLS
from ._wire import handle, serve

__all__ = ["CONFIG", "PROTOCOL_VERSIONS", "TOOLS", "Session", "handle", "main", "serve"]
