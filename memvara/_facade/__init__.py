"""The facade: ``Memvara`` and ``ScopedMemvara`` (``memvara``) and their asyncio twins
(``aio``). Each method validates its arguments, resolves the scope and the time query
once, and hands the work to one service call; no SQL and no ranking live here."""
