"""The Reach page: the entries the agent never returns; ``page.ReachPage`` builds it."""
