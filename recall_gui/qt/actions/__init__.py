"""What the window does to tables and databases beside its pages: opening tables by their folder or URI
(``opened_tables``), and activating, deactivating and unregistering a registered database
(``databases``). The knowledge page, the description page and the main window's menus share them."""
