"""The map page, in parts with one job each (docs/ARCHITECTURE.md lists them).

``page.MapPage`` builds the widgets, reads them in its slots and composes the parts: ``making`` (the map
made, from the cache or in the background, and the points chosen carried over), ``drawing`` (the points in
their colours, the legend, the search's results ringed) and ``pointing`` (the label under the pointer, the
point opened, the points chosen); ``shown`` holds what the page shows.
"""
