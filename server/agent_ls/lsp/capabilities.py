"""Client capabilities, resolved once at ``initialize`` into the booleans the server acts on.

Source: LSP 3.17 ``ClientCapabilities`` (workspace.applyEdit, workspace.workspaceEdit.documentChanges,
resourceOperations, changeAnnotationSupport; workspace.didChangeWatchedFiles.dynamicRegistration;
window.workDoneProgress, window.showMessage).
Behaviour follows ruff ``session/capabilities.rs``.
"""

from __future__ import annotations

from dataclasses import dataclass

from lsprotocol import types as t


@dataclass(frozen=True)
class ClientFlags:
    apply_edit: bool = False
    document_changes: bool = False
    resource_create: bool = False
    change_annotations: bool = False
    work_done_progress: bool = False
    show_message_request: bool = False
    watched_files_registration: bool = False
    """The client watches files for us when asked (``client/registerCapability`` of
    ``workspace/didChangeWatchedFiles``); otherwise the server watches them itself."""

    @classmethod
    def from_capabilities(cls, caps: t.ClientCapabilities | None) -> ClientFlags:
        if caps is None:
            return cls()
        workspace = caps.workspace
        edit = workspace.workspace_edit if workspace else None
        window = caps.window
        return cls(
            apply_edit=bool(workspace and workspace.apply_edit),
            # Resource operations only exist inside documentChanges; Neovim 0.7 declares them without
            # declaring documentChanges, and applies documentChanges fine.
            document_changes=bool(edit and (edit.document_changes or edit.resource_operations)),
            resource_create=bool(
                edit
                and edit.resource_operations
                and t.ResourceOperationKind.Create in edit.resource_operations
            ),
            change_annotations=bool(edit and edit.change_annotation_support is not None),
            work_done_progress=bool(window and window.work_done_progress),
            show_message_request=bool(window and window.show_message is not None),
            watched_files_registration=bool(
                workspace
                and workspace.did_change_watched_files
                and workspace.did_change_watched_files.dynamic_registration
            ),
        )
