"""The knowledge-base page, in parts with one job each (docs/ARCHITECTURE.md lists them).

``page.KnowledgePage`` builds the widgets and composes the parts: ``choosing`` (the database),
``following`` (the header and the version list after another program wrote the table),
``searching`` (the agent's search and "more like this"), ``browsing`` (pages of rows), ``scope_controls``
(the version, the columns, the map's selection), ``entry_detail`` (the selected entry), ``would_see``
(would the agent see it, golden checks), ``exporting``, ``documents_tab`` and ``words_tab`` (the side
tabs that follow a search), ``reviewing`` (verdicts beside results, "Review from here") and ``remembering``
(what is kept for the next start); ``looking_at`` holds what the page looks at.
"""
