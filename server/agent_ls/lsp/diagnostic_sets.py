"""The diagnostics the server shows, kept per source and published merged per document.

``textDocument/publishDiagnostics`` replaces everything a server showed for a URI (LSP 3.17), so two
producers publishing for the same file would erase each other: the config-file check (``agent-ls.toml``),
the AGENTS.md/SKILL.md lint and the review findings (``review_diagnostics``) each replace only their own
set here, and the URI is published with every set, in ``SOURCES`` order. Behaviour follows rust-analyzer's
``DiagnosticCollection`` (native and check diagnostics kept apart, merged on publication).
"""

from __future__ import annotations

from typing import Literal, Protocol

from lsprotocol import types as t

DiagnosticSource = Literal["config", "agent-files", "review"]
SOURCES: tuple[DiagnosticSource, ...] = ("config", "agent-files", "review")


class Publisher(Protocol):
    def text_document_publish_diagnostics(self, params: t.PublishDiagnosticsParams) -> None: ...


class DiagnosticSets:
    """The current diagnostics per URI and source; empty sets are not kept."""

    def __init__(self) -> None:
        self._sets: dict[str, dict[DiagnosticSource, list[t.Diagnostic]]] = {}

    def get(self, uri: str, source: DiagnosticSource) -> list[t.Diagnostic]:
        """What ``source`` shows for ``uri`` now (a copy; empty when nothing)."""
        return list(self._sets.get(uri, {}).get(source, []))

    def uris(self, source: DiagnosticSource) -> list[str]:
        """The URIs where ``source`` shows something, in the order they were first set."""
        return [uri for uri, sets in self._sets.items() if sets.get(source)]

    def publish(
        self, ls: Publisher, uri: str, source: DiagnosticSource, diagnostics: list[t.Diagnostic]
    ) -> None:
        """Replace ``source``'s set for ``uri`` with ``diagnostics`` and publish the URI's merged list
        (every source's, in ``SOURCES`` order). Publishes nothing when neither before nor now showed any."""
        sets = self._sets.setdefault(uri, {})
        had = bool(sets.get(source))
        if diagnostics:
            sets[source] = list(diagnostics)
        else:
            sets.pop(source, None)
        if not sets:
            del self._sets[uri]
        if not had and not diagnostics:
            return
        merged = [d for name in SOURCES for d in sets.get(name, [])]
        ls.text_document_publish_diagnostics(t.PublishDiagnosticsParams(uri=uri, diagnostics=merged))
