"""The names of :mod:`recall_gui.core.embedders` (its face), for type checkers and for ``lazy_loader``:
each is loaded from its module on first use. A front end's new name is one line here."""
