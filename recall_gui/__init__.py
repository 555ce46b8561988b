"""recall-gui: browse, search and verify the LanceDB knowledge bases LLM agents recall from."""

__version__ = "0.1.0"
