"""Turning text into vectors: the local fastembed models, cloud providers and the pool that owns them.

No front end uses its modules directly: the core reaches them.
"""
