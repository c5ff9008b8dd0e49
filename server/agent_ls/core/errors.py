"""The exception tree of agent-ls, and who sees each error.

::

    AgentLsError
    ├── ConfigError            user: the run does not start (no model, bad model string)
    ├── ModelError             user: the run ends with status "error", reason = str(error)
    │   ├── ModelConnectionError   the server is unreachable (connect error, DNS)     retried
    │   │   ├── ModelStreamError       the stream broke or ended before the response     retried
    │   │   └── ModelTimeoutError      no answer (or no stream data) within the timeout
    │   ├── ModelAuthError         401 / 403
    │   ├── ModelNotFoundError     404 (wrong base URL or model name)
    │   ├── ModelRequestError      400 and other 4xx (the server's message is kept)
    │   │   ├── ModelRateLimitError    429                                              retried
    │   │   └── ModelContextOverflowError  the conversation is over the context window
    │   ├── ModelServerError       5xx                                                 retried
    │   │   └── ModelOverloadedError   529, or an in-band overloaded_error              retried
    │   ├── ModelResponseError     a 2xx body we cannot read
    │   ├── ScriptExhausted        a replay script has no step left
    │   └── ReplayMismatch         a replayed session's request differs from the recorded one
    └── ToolError              model: an error tool result; the run continues
        ├── PathRefused            outside the workspace, or a secret file
        └── EditFailed             old_string missing or ambiguous, and similar

Model errors carry the URL and model in their message, never the API key. Provider and httpx
errors are translated once, in ``models/errors.py``.
"""

from __future__ import annotations


class AgentLsError(Exception):
    """Base of every error agent-ls raises on purpose."""


class ConfigError(AgentLsError):
    """User: the configuration cannot start a run (for example no model). Message is one line."""


class ModelError(AgentLsError):
    """User: a model call failed; the run ends with status ``error`` and this one-line message.

    Attributes:
        retry_after_s: the wait the server asked for (``retry-after``/``retry-after-ms``), in seconds, or
            None when it named none.
    """

    retryable = False

    def __init__(self, message: str, *, retry_after_s: float | None = None) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


class ModelConnectionError(ModelError):
    """User: the model server could not be reached. Retried."""

    retryable = True


class ModelStreamError(ModelConnectionError):
    """User: the response stream broke (reset, truncated, invalid event) before it was complete. Retried."""


class ModelTimeoutError(ModelConnectionError):
    """User: the server sent nothing within the timeout. Not retried: the same wait would follow."""

    retryable = False


class ModelAuthError(ModelError):
    """User: the model server refused the credentials (HTTP 401/403)."""


class ModelNotFoundError(ModelError):
    """User: the URL or the model does not exist on the server (HTTP 404)."""


class ModelRequestError(ModelError):
    """User: the server rejected the request (HTTP 400 or another 4xx); the message quotes the server."""


class ModelRateLimitError(ModelRequestError):
    """User: HTTP 429; ``retry_after_s`` holds the server's wait when it sent one. Retried."""

    retryable = True


class ModelContextOverflowError(ModelRequestError):
    """User: the conversation does not fit the model's context window."""


class ModelServerError(ModelError):
    """User: the server failed (HTTP 5xx). Retried."""

    retryable = True


class ModelOverloadedError(ModelServerError):
    """User: the provider is overloaded (HTTP 529, or an in-band ``overloaded_error`` event). Retried."""


class ModelResponseError(ModelError):
    """User: the server answered 2xx with a body that is not a chat completion."""


class ScriptExhausted(ModelError):
    """User: a ``replay:`` script has no step left for this model call."""


class ReplayMismatch(ModelError):
    """User: under ``replay:<session.jsonl>`` the harness sent a request that differs from the recorded
    one; the message names the call, the message and the field, with both texts around the difference."""


class ToolError(AgentLsError):
    """Model: the tool failed; the message becomes an error tool result and the run continues."""


class PathRefused(ToolError):
    """Model: the path is outside the workspace or is a secret file; the message says what to do instead."""


class EditFailed(ToolError):
    """Model: an edit could not be applied (old_string missing or ambiguous); nothing was changed."""
