"""The Agent view: the tool and a search as an MCP client receives them; ``page.AgentPage`` builds it."""
