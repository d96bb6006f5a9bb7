"""mcp package."""
