"""The domain: claims, episodes, scopes and time queries (``model``), instants (``time``),
the entity fold (``entities``), argument checks for domain values (``args``) and the
salience math (``salience``). Every other layer imports downward into this one; it imports
nothing of memvara's but the errors."""
