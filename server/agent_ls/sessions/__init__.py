"""The session store (docs/sessions.md): append-only JSONL per session, replay, resume."""
