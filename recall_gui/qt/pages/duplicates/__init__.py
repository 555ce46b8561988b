"""The Duplicates page: groups of near-duplicate entries; ``page.DuplicatesPage`` builds it."""
