"""The write path. ``add()`` runs its tiers in ``ingest`` (duplicate turns, the salience
``gate``, the ``rules`` tier with ``scripts`` detection, then the batched model), and every
claim is settled by the ``writer`` on a plan from ``reconcile``. ``background`` queues
writes off the caller's thread, ``reembed`` rewrites vectors for a new embedder and
``consolidate`` sweeps a scope's claims."""
