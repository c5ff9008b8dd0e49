"""Where a link destination points, as a browser would resolve it: for the warnings about defanged images.

A destination is decoded as CommonMark and the WHATWG URL Standard decode it before fetching: character
references (``https&#58;//``) and backslash escapes first, then tabs and line feeds dropped and C0 controls
and spaces stripped at both ends. A special scheme (http, https, ws, wss, ftp, file) skips any slashes and
backslashes after its colon (``https:\\\\host`` and ``https:host`` name a host), and a destination
starting with two slashes or backslashes takes the page's scheme. The host is percent-decoded, lower-cased,
stripped of user info, port and a final dot, and written in IDNA (``xn--…``) when it is not ASCII.
"""

from __future__ import annotations

import html
import re
from urllib.parse import unquote

_SPECIAL_SCHEMES = frozenset({"http", "https", "ws", "wss", "ftp", "file"})
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*):")
_HOSTNAME = re.compile(r"[a-z0-9._-]+|\[[0-9a-f:.]+\]")
_LOCAL_PATH = re.compile(r"[\w.~/+%@,-]{1,80}")


def describe_url(url: str) -> tuple[str, str]:
    """``(host, what)`` for a link destination as a renderer would resolve it.

    ``what`` is ``"http"`` for an http(s) URL (or one starting with two slashes) with a readable host,
    else a phrase: ``a data: URI``, ``a file: URL on <host>``, ``a local path p.png``, ``a URL with an
    unreadable host``. ``host`` is the lower-case host name (IDNA for a non-ASCII one), or "".
    Character references and backslash escapes are decoded first and tabs and line feeds dropped, as
    CommonMark and the WHATWG URL parser do.
    """
    decoded = html.unescape(re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", url))
    decoded = re.sub(r"[\t\n\r]", "", decoded).strip("".join(map(chr, range(0x21))))
    scheme_found = _SCHEME.match(decoded)
    if scheme_found is None and not re.match(r"[/\\]{2}", decoded):
        shown = decoded if _LOCAL_PATH.fullmatch(decoded) else ""
        return "", f"a local path {shown}".rstrip()
    scheme = scheme_found[1].lower() if scheme_found else "https"
    rest = decoded[scheme_found.end() :] if scheme_found else decoded
    if scheme not in _SPECIAL_SCHEMES:
        return "", f"a {scheme}: URI"
    authority = re.split(r"[/\\?#]", rest.lstrip("/\\"), maxsplit=1)[0]
    host = _hostname(unquote(authority.rpartition("@")[2]))
    if scheme == "file":
        return host, f"a file: URL on {host}" if host else "a local file: URL"
    if not host:
        return "", "a URL with an unreadable host"
    return host, "http" if scheme in ("http", "https") else f"a {scheme}: URL on {host}"


def _hostname(authority: str) -> str:
    if authority.startswith("["):
        name = authority[: authority.find("]") + 1]
    else:
        name = authority.partition(":")[0]
    name = name.lower().rstrip(".")
    if not name.isascii():
        try:
            name = name.encode("idna").decode("ascii")
        except UnicodeError:
            return ""
    return name if _HOSTNAME.fullmatch(name) else ""
