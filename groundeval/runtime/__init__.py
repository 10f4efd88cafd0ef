"""The gated tool runtime: episodes, tool specs, context windows and the MCP server."""
