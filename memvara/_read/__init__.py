"""The read path. ``retrieve`` gathers candidates, fuses and rescores them with the
ranking ``weights``, helped by the signals in ``answer_types`` and ``query_dates``;
``recall`` renders results for a prompt; ``graph`` walks edges at one pinned instant and
``provenance`` answers ``why()``."""
