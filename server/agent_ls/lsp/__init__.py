"""The LSP front end: the only package (besides the demo's client) that imports pygls and lsprotocol."""
