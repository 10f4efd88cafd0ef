"""The gated tool runtime: episodes, tool specs, context windows and the MCP server."""

__all__ = [
    "episode",
    "interface",
    "jsonrpc_guard",
    "mcp_server",
    "question_cache",
    "search_sql",
    "tools",
]  # the public modules
