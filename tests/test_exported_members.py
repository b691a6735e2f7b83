"""The public surface: ``memvara.__all__`` is sorted, complete and importable."""

from __future__ import annotations

import memvara
import memvara.store


def test_all_is_sorted() -> None:
    assert memvara.__all__ == sorted(memvara.__all__)


def test_every_exported_name_exists() -> None:
    for name in memvara.__all__:
        assert hasattr(memvara, name), name


def test_every_public_top_level_name_is_exported() -> None:
    public = {
        name for name, value in vars(memvara).items()
        if not name.startswith("_") and not isinstance(value, type(memvara))
    } - {"annotations"}
    assert public <= set(memvara.__all__) | {"__version__"}


def test_store_package_exports_the_protocol_and_states() -> None:
    assert memvara.store.__all__ == sorted(memvara.store.__all__)
    assert memvara.store.STATES == ("live", "ended", "retired")
    store = memvara.SQLiteStore()
    try:
        assert isinstance(store, memvara.Store)
    finally:
        store.close()


def test_names_the_single_modules_had_are_still_importable() -> None:
    """``memvara.store.sqlite`` and ``memvara.cli`` became packages; every name importable
    from them before is importable from them still."""
    import memvara.cli
    import memvara.store.sqlite

    for name in ("SQLiteStore", "content_hash", "CHECKPOINT_PAGES", "TEXT_INDEX_BATCH",
                 "MIN_SQLITE", "SCHEMA_VERSION", "MIGRATIONS", "APPLICATION_ID",
                 "FOLD_FUNCTION", "CLAIM_COLUMNS", "claim_row", "decode_claim", "new_id",
                 "VectorFile", "nearest_admitted", "reinforced_storage", "retrievability",
                 "fold_entity", "Written", "Settlement", "RankFields"):
        assert hasattr(memvara.store.sqlite, name), name
    for name in ("main", "run_demo", "Claim", "Memvara", "NullLLM", "SQLiteStore"):
        assert hasattr(memvara.cli, name), name
