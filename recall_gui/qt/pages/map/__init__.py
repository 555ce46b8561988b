"""The map page: the current table's entries on a plane; ``page.MapPage`` builds it."""
