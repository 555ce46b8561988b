"""The Checks page, in parts with one job each (docs/ARCHITECTURE.md lists them).

``page.ChecksPage`` builds the widgets, shows the golden file and composes the parts: ``running`` (a run
of the checks, every version, A/B, hubs), ``editing`` (the file and its checks as the user changes them)
and ``outcome`` (one check's outcome in words).
"""
