"""The Agent log page, in parts with one job each (docs/ARCHITECTURE.md lists them).

``page.LogPage`` holds the settings row and the note, reads the log when its files change and composes
the parts: ``calls`` (the calls, one call's results and its replay), ``coverage`` (what the calls
returned of a database, and its hubs) and ``reading`` (the log read on a worker, a batch at a time).
"""
