"""The Health page: one database's health report; ``page.HealthPage`` builds it."""
