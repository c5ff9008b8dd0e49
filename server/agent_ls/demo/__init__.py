"""``agent-ls demo``: the bundled sample project, the replay script that plays the model, and the
LSP client that drives ``agent-ls serve`` through them."""
