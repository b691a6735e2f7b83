"""The domain: claims, episodes, scopes and time queries (``model``), what calls return
(``results``), instants (``time``), the entity fold (``entities``), the words a search
looks for (``terms``), argument checks for domain values (``args``) and the salience
math (``salience``). Every other layer imports downward into this one; it imports
nothing of memvara's but the errors."""
