"""The pygls protocol with every string of an incoming message made well-formed before it is used.

JSON lets an editor send half of a UTF-16 surrogate pair (``"\\ud83d"`` in a didChange, a command argument
or a setting); Python decodes it to a string that cannot be encoded, and the buffer, the proposal, the
diff or the WorkspaceEdit built from it later raises ``UnicodeEncodeError``. ``structure_message`` is where
every decoded message passes (as pygls's ``object_hook``, once per object, and from ``lsp/stdio.py``
once per message): for a whole message (it has ``jsonrpc``), each string is replaced by
``core.untrusted_json.well_formed`` (a lone half becomes U+FFFD) before pygls structures it.
"""

from __future__ import annotations

from typing import Any

from pygls.protocol import LanguageServerProtocol

from agent_ls.core.untrusted_json import well_formed_value


class WellFormedProtocol(LanguageServerProtocol):
    """``LanguageServerProtocol`` whose incoming messages hold only well-formed strings."""

    def structure_message(self, data: dict[str, Any]) -> Any:
        if "jsonrpc" in data:
            data = well_formed_value(data)
        return super().structure_message(data)
