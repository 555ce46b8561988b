"""The window: everything that imports PySide6 or qasync lives here."""
