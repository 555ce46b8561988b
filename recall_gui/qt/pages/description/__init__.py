"""The agent's tool description page, in parts with one job each (docs/ARCHITECTURE.md lists them).

``page.DescriptionPage`` composes three boxes side by side: ``databases`` (which databases agents search,
and each one's description), ``suffix`` (the suffix: the live list, the user's notes or own text) and
``preview`` (what the agent gets, tinted by where each part came from).
"""
