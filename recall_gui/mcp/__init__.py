"""The MCP server, the third front end: the wire (JSON-RPC over stdio), the server that answers
``recall_search`` as cosh's harness does, and the probe that asks it as an agent would.
"""
