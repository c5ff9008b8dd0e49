"""agent-ls: a language server that hosts a coding agent.

Layers (see DESIGN.md): ``core`` sequences a run and talks to the world through the ports in
``core.ports``; ``models``, ``tools``, ``workspace``, ``policy`` and ``instructions`` implement
them; ``lsp`` and ``cli`` render the core's events for an editor or a terminal.
"""

__version__ = "0.1.0"
