"""LSP handlers grouped by area; each is a plain function whose first parameter is ``ls``."""
