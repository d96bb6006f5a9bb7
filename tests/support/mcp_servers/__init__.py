"""Real MCP servers (built with `mcp.server.MCPServer`) that the MCP tests start as subprocesses."""
