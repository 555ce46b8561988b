"""The History page: a table's versions and what changed between two; ``page.HistoryPage`` builds it."""
