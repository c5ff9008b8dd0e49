"""``tls_verify``: a plain ``http`` endpoint skips loading the CA bundle (start-up time, issue 16) but
still never connects over TLS without verification."""

from __future__ import annotations

import ssl

import pytest

from agent_ls.models.base import tls_verify


def test_an_https_endpoint_keeps_httpx_default_verification() -> None:
    assert tls_verify("https://api.openai.com/v1") is True


def test_a_plain_http_endpoint_gets_a_verifying_context_with_no_ca_loaded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in ("HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    context = tls_verify("HTTP://127.0.0.1:11434/v1")

    assert isinstance(context, ssl.SSLContext)
    assert context.verify_mode == ssl.CERT_REQUIRED
    assert context.check_hostname
    assert context.cert_store_stats()["x509_ca"] == 0


def test_a_plain_http_endpoint_behind_a_proxy_keeps_the_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HTTP_PROXY", "https://proxy.example:3128")

    assert tls_verify("http://127.0.0.1:11434/v1") is True
