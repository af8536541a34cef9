"""The tool registry: MCP servers installed as tool bundles, called only through the kernel."""
