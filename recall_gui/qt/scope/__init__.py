"""The knowledge page's scope as the rest of the window sees it: the table it shows (``table_scope``'s
``TableScope``, the History and Map pages follow it) and what the user asked for there (``inputs``)."""
