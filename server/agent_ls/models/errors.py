"""The one place where httpx exceptions and HTTP error statuses become the core's ``ModelError`` classes.

A model adapter sends one request in this order, and each step has its translation here:
1. inside ``translated_errors(endpoint)``: send the request, then ``response.raise_for_status()``;
   transport failures map through ``TRANSPORT_ERRORS``, statuses through ``status_error_class``;
2. ``read_body(response, endpoint, Model)``: a 2xx body that is not JSON or not ``Model`` becomes
   ``ModelResponseError``.

Every message is one line, names the request URL and the model string, and never contains the API
key (it is redacted even when a server echoes it). Anchor: httpx ``_transports/default.py``
``map_httpcore_exceptions``.
"""

from __future__ import annotations

import datetime
import email.utils
import json
import math
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, TypeVar

import httpx
from pydantic import BaseModel, ValidationError

from agent_ls.core.errors import (
    ModelAuthError,
    ModelConnectionError,
    ModelContextOverflowError,
    ModelError,
    ModelNotFoundError,
    ModelOverloadedError,
    ModelRateLimitError,
    ModelRequestError,
    ModelResponseError,
    ModelServerError,
    ModelTimeoutError,
)

MAX_SERVER_MESSAGE_CHARS = 300

M = TypeVar("M", bound=BaseModel)


@dataclass(frozen=True)
class Endpoint:
    """What an error message names, and what it must hide.

    Attributes:
        url: the full request URL (``http://localhost:11434/v1/chat/completions``).
        model_name: the model string the user chose (``ollama/qwen2.5-coder:7b``).
        key_env: the provider's own key variable (``OPENAI_API_KEY``), or None when it has none.
        api_key: the key sent, if any; only used to redact it from messages.
    """

    url: str
    model_name: str
    key_env: str | None = None
    api_key: str | None = field(default=None, repr=False)


# Most specific first: the first class the exception is an instance of wins. A test checks that every
# exception httpx exports is either here or in ``UNTRANSLATED`` (those are our bugs, not the server's).
TRANSPORT_ERRORS: tuple[tuple[type[Exception], type[ModelError], str], ...] = (
    (httpx.ConnectTimeout, ModelConnectionError, "connect timed out"),
    (httpx.ReadTimeout, ModelTimeoutError, "no response before the read timeout"),
    (httpx.WriteTimeout, ModelConnectionError, "write timed out"),
    (httpx.PoolTimeout, ModelTimeoutError, "no free connection before the pool timeout"),
    (httpx.TimeoutException, ModelConnectionError, "timed out"),
    (httpx.ConnectError, ModelConnectionError, "connection failed"),
    (httpx.ReadError, ModelConnectionError, "reading the response failed"),
    (httpx.WriteError, ModelConnectionError, "sending the request failed"),
    (httpx.CloseError, ModelConnectionError, "closing the connection failed"),
    (httpx.NetworkError, ModelConnectionError, "network error"),
    (httpx.ProxyError, ModelConnectionError, "the proxy failed"),
    (httpx.RemoteProtocolError, ModelConnectionError, "the server closed the connection or broke HTTP"),
    (httpx.LocalProtocolError, ModelRequestError, "the request is not valid HTTP"),
    (httpx.ProtocolError, ModelConnectionError, "HTTP protocol error"),
    (httpx.UnsupportedProtocol, ModelConnectionError, "the URL must start with http:// or https://"),
    (httpx.InvalidURL, ModelConnectionError, "invalid URL"),
    (httpx.TransportError, ModelConnectionError, "transport error"),
    (httpx.DecodingError, ModelResponseError, "the response body could not be decoded"),
    (httpx.TooManyRedirects, ModelRequestError, "too many redirects"),
    (httpx.RequestError, ModelConnectionError, "request failed"),
    (httpx.HTTPError, ModelConnectionError, "HTTP error"),
)

# Misuse of httpx by our own code (an invariant, a bug): they propagate untranslated.
UNTRANSLATED: tuple[type[Exception], ...] = (httpx.CookieConflict, httpx.StreamError)


# What servers say when the prompt is over the context window (OpenAI ``context_length_exceeded``,
# Anthropic "prompt is too long", vLLM/llama.cpp "maximum context length", Ollama "context window";
# llama.cpp's server: "the request exceeds the available context size, try increasing it", its type apart).
CONTEXT_OVERFLOW_MARKERS = (
    "context_length_exceeded",
    "context length",
    "context window",
    "prompt is too long",
    "too many tokens",
    "exceeds the context",
    "exceed_context_size",
    "available context size",
)


def status_error_class(status: int, server_message: str = "") -> type[ModelError]:
    """The error class for a non-2xx status.

    401/403 auth; 404 and 3xx not found; 429 rate limited (out of quota: a request error, as waiting
    cannot help); 400 and 413 whose message names the context window (``CONTEXT_OVERFLOW_MARKERS``)
    context overflow; other 4xx request; 529 overloaded; 5xx server.
    """
    if status in (401, 403):
        return ModelAuthError
    if status == 404 or 300 <= status < 400:
        return ModelNotFoundError
    if status == 429 and any(m in server_message.lower() for m in ("insufficient_quota", "current quota")):
        return ModelRequestError  # out of credit: waiting does not help (OpenAI sends it as a 429)
    if status == 429:
        return ModelRateLimitError
    if status in (400, 413) and any(m in server_message.lower() for m in CONTEXT_OVERFLOW_MARKERS):
        return ModelContextOverflowError
    if status == 529:
        return ModelOverloadedError
    if 400 <= status < 500:
        return ModelRequestError
    if status >= 500:
        return ModelServerError
    return ModelResponseError


@contextmanager
def translated_errors(endpoint: Endpoint) -> Iterator[None]:
    """Translate httpx exceptions raised in the block into ``ModelError`` (``raise … from exc``).

    Raises:
        ModelError: the subclass ``status_error_class`` gives for an ``httpx.HTTPStatusError``, or the one
            ``TRANSPORT_ERRORS`` gives for a transport failure. Other exceptions pass through unchanged.
    """
    try:
        yield
    except httpx.HTTPStatusError as exc:
        raise status_error(exc.response, endpoint) from exc
    except (httpx.HTTPError, httpx.InvalidURL) as exc:
        raise transport_error(exc, endpoint) from exc


def read_body(response: httpx.Response, endpoint: Endpoint, model: type[M]) -> M:
    """Validate a 2xx response body as ``model``.

    Raises:
        ModelResponseError: the body is not JSON, or does not have the shape of ``model``.
    """
    try:
        return model.model_validate_json(response.content)
    except ValidationError as exc:
        first = exc.errors()[0]
        if first["type"] == "json_invalid":
            reason = f"the body is not JSON: {_clip(redact(response.text, endpoint), 80)!r}"
        else:
            where = ".".join(str(part) for part in first["loc"]) or "body"
            reason = f"unexpected body: {where}: {first['msg']}"
        message = (
            f"the model server at {endpoint.url} sent an unreadable response "
            f"(HTTP {response.status_code}) for model {endpoint.model_name}: {reason}"
        )
        raise ModelResponseError(redact(message, endpoint)) from exc


def transport_error(exc: Exception, endpoint: Endpoint) -> ModelError:
    """The ``ModelError`` for an httpx exception (see ``TRANSPORT_ERRORS``); the caller raises it."""
    error_class, description = next(
        ((target, text) for source, target, text in TRANSPORT_ERRORS if isinstance(exc, source)),
        (ModelConnectionError, "request failed"),
    )
    detail = str(exc).strip()
    reason = f"{description} ({detail})" if detail and detail != description else description
    if error_class is ModelTimeoutError:
        message = (
            f"the model server at {endpoint.url} did not answer in time for model {endpoint.model_name}: "
            f"{reason}"
        )
    elif error_class is ModelConnectionError:
        message = f"cannot reach the model server at {endpoint.url} for model {endpoint.model_name}: {reason}"
    else:
        message = f"the request to {endpoint.url} for model {endpoint.model_name} failed: {reason}"
    return error_class(redact(message, endpoint))


def status_error(response: httpx.Response, endpoint: Endpoint) -> ModelError:
    """The ``ModelError`` for a non-2xx response (see ``status_error_class``); the caller raises it."""
    status = response.status_code
    said = _server_message(response, endpoint)
    error_class = status_error_class(status, said)
    where = f"the model server at {endpoint.url}"
    said_part = f": {said}" if said else ""
    retry_after = retry_after_s(response.headers)
    if error_class is ModelAuthError:
        places = f"AGENT_LS_API_KEY or {endpoint.key_env}" if endpoint.key_env else "AGENT_LS_API_KEY"
        what = "rejected the API key" if endpoint.api_key else "requires an API key"
        message = f"{where} {what} (HTTP {status}) for model {endpoint.model_name}; set {places}"
    elif error_class is ModelNotFoundError and status != 404:
        location = response.headers.get("location", "elsewhere")
        message = (
            f"{where} redirected (HTTP {status}) to {location} for model {endpoint.model_name}; "
            "check the base URL"
        )
    elif error_class is ModelNotFoundError:
        message = (
            f"{where} answered HTTP 404 for model {endpoint.model_name}{said_part}; "
            "check the base URL and the model name"
        )
    elif error_class is ModelRateLimitError:
        wait = f"; it asked to wait {retry_after:g} s" if retry_after is not None else ""
        message = f"{where} is rate limiting (HTTP 429) model {endpoint.model_name}{said_part}{wait}"
    elif error_class is ModelContextOverflowError:
        message = (
            f"the conversation is over the context window of model {endpoint.model_name} "
            f"(HTTP {status} from {endpoint.url}){said_part}"
        )
    elif error_class is ModelOverloadedError:
        message = f"{where} is overloaded (HTTP {status}) for model {endpoint.model_name}{said_part}"
    elif error_class is ModelServerError:
        message = f"{where} failed (HTTP {status}) for model {endpoint.model_name}{said_part}"
    else:
        message = f"{where} rejected the request (HTTP {status}) for model {endpoint.model_name}{said_part}"
    return error_class(redact(message, endpoint), retry_after_s=retry_after)


# In-band error kinds (an error sent after HTTP 200: a stream event, a 200 body, a failed response) and
# the status they stand for. Anthropic error types (docs "Errors"), OpenAI error types and codes
# (Chat Completions chunks, Responses ``response.failed``/``error`` events; the image codes are the rest
# of the Responses ``ResponseError.code`` enum: the input is at fault, so retrying cannot help).
IN_BAND_KIND_STATUS: dict[str, int] = {
    "invalid_request_error": 400,
    "invalid_prompt": 400,
    "context_length_exceeded": 400,
    "invalid_image": 400,
    "invalid_image_format": 400,
    "invalid_base64_image": 400,
    "invalid_image_url": 400,
    "image_too_large": 400,
    "image_too_small": 400,
    "image_parse_error": 400,
    "image_content_policy_violation": 400,
    "invalid_image_mode": 400,
    "image_file_too_large": 400,
    "unsupported_image_media_type": 400,
    "empty_image_file": 400,
    "failed_to_download_image": 400,
    "image_file_not_found": 400,
    "authentication_error": 401,
    "invalid_api_key": 401,
    "billing_error": 402,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "rate_limit_exceeded": 429,
    "insufficient_quota": 402,
    "api_error": 500,
    "server_error": 500,
    "internal_error": 500,
    "timeout_error": 504,
    "vector_store_timeout": 504,
    "overloaded_error": 529,
    "server_is_overloaded": 529,
    "slow_down": 529,
}


def in_band_status(kind: str | None, said: str = "") -> int:
    """The status an in-band error stands for: ``IN_BAND_KIND_STATUS``, else by words in ``kind`` or
    ``said`` (overloaded 529, rate limit 429), a numeric code 400-599 as itself, else 500 (a server
    failure, retried)."""
    key = (kind or "").strip().lower()
    if key in IN_BAND_KIND_STATUS:
        return IN_BAND_KIND_STATUS[key]
    if key.isdigit() and 400 <= int(key) <= 599:  # OpenRouter sends the status as the code
        return int(key)
    words = f"{key} {said.lower()}"
    if "overloaded" in words or key == "529":
        return 529
    if "rate_limit" in key or "rate limit" in words:
        return 429
    return 500


def in_band_error(endpoint: Endpoint, kind: str | None, said: str | None) -> ModelError:
    """The ``ModelError`` for an error a server sent after HTTP 200; the caller raises it.

    Args:
        kind: the error's type or code as the API names it (``overloaded_error``, ``server_error``), or None.
        said: the server's message, or None.

    The class is the one ``status_error_class`` gives for ``in_band_status(kind, said)``: overloaded and
    server errors are retried, a context overflow is not. The message is one line naming the URL and the
    model, never the API key.
    """
    text = _clip(said or "", MAX_SERVER_MESSAGE_CHARS)
    # The kind counts as what the server said too: ``context_length_exceeded`` names the overflow itself.
    error_class = status_error_class(in_band_status(kind, text), f"{kind or ''} {text}")
    message = (
        f"the model server at {endpoint.url} sent an error after HTTP 200 for model {endpoint.model_name}: "
        f"{text or 'no message'}" + (f" ({kind})" if kind else "")
    )
    return error_class(redact(message, endpoint))


def retry_after_s(headers: httpx.Headers) -> float | None:
    """The wait a server asked for, in seconds: ``retry-after-ms`` (milliseconds, OpenAI and Anthropic),
    else ``retry-after`` (seconds, or an HTTP date per RFC 9110 §10.2.3); None when absent or unreadable."""
    millis = headers.get("retry-after-ms")
    if millis is not None:
        try:
            value = float(millis) / 1000
        except ValueError:
            value = -1.0
        if value >= 0 and math.isfinite(value):
            return value
    text = headers.get("retry-after")
    if text is None:
        return None
    try:
        seconds = float(text)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(text)
        except (TypeError, ValueError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=datetime.UTC)
        seconds = (when - datetime.datetime.now(datetime.UTC)).total_seconds()
        return max(seconds, 0.0)
    return seconds if seconds >= 0 and math.isfinite(seconds) else None


def _server_message(response: httpx.Response, endpoint: Endpoint) -> str:
    """The server's words: ``error.message``, else ``error``/``message``/``detail``, else the body."""
    text = redact(response.text, endpoint)
    try:
        body: Any = json.loads(text)
    except ValueError:
        body = None
    if isinstance(body, dict):
        error = body.get("error")
        candidates = (
            error.get("message") if isinstance(error, dict) else error,
            body.get("message"),
            body.get("detail"),
        )
        for candidate in candidates:
            if isinstance(candidate, str) and candidate.strip():
                return _clip(candidate, MAX_SERVER_MESSAGE_CHARS)
    return _clip(text, MAX_SERVER_MESSAGE_CHARS)


def _clip(text: str, max_chars: int) -> str:
    """``text`` on one line, cut to ``max_chars`` characters with an ellipsis."""
    line = " ".join(text.split())
    return line if len(line) <= max_chars else line[: max_chars - 1] + "…"


MIN_SECRET_CHARS = 8
"""Shorter keys are placeholders local servers accept (``ollama``, ``EMPTY``, ``none``), not secrets:
replacing them everywhere would garble messages (``model ***/qwen2.5``)."""


def redact(text: str, endpoint: Endpoint) -> str:
    """``text`` on one line with the API key (as sent, and stripped) replaced by ``***``; keys shorter than
    ``MIN_SECRET_CHARS`` are left alone."""
    if endpoint.api_key:
        for secret in (endpoint.api_key, endpoint.api_key.strip()):
            if len(secret) >= MIN_SECRET_CHARS:
                text = text.replace(secret, "***")
    return " ".join(text.split())
