"""The names of :mod:`recall_gui.core.embedders` (its face), for type checkers and for ``lazy_loader``:
each is loaded from its module on first use. A front end's new name is one line here."""

from .base import ModelInfo as ModelInfo
from .model_catalog import CatalogEntry as CatalogEntry, catalog as catalog, catalog_entry as catalog_entry
from .model_download import download as download, import_copy as import_copy
from .model_reading import ModelReading as ModelReading, ReadExtent as ReadExtent
