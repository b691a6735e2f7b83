"""The read path. ``retrieve`` gathers candidates, fuses and rescores them by the ranking
``weights``, helped by the signals in ``answer_types`` and ``query_dates``, and computes
in memory what the store has not stored yet (``waiting``); ``recall`` renders results for
a prompt; ``graph`` walks edges at one pinned instant and ``provenance`` answers
``why()``. Nothing here writes to the store."""
