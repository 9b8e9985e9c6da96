"""The HTTP under the Ollama client: the host's address, proxies, and sockets that can be cut.

httpx's timeout is per read: a server that drips a byte a second, or a model
that thinks for minutes, never trips it, and closing an httpx client does not wake a thread
blocked in `recv`. So every connection the client opens is tracked here (`CallSockets`),
and a deadline, a cancel or the end of the process shuts the socket down under the read:
the blocked read returns at once and the call fails (or is cancelled) within a moment.

Proxies: the environment's HTTP_PROXY/HTTPS_PROXY/ALL_PROXY are never used for Ollama
(private text would pass through them); only the `ollama.proxy` setting names one.
"""

from __future__ import annotations

import ipaddress
import socket
import ssl
import threading
import weakref
from typing import Any
from urllib.parse import urlsplit

import httpcore
import httpx

from docatlas.core.base.errors import LLMError
from docatlas.core.base.settings import DEFAULT_HOST, OllamaSettings
from docatlas.core.llm.ollama_http import OllamaHTTP

DEFAULT_PORT = 11434
COALESCE_BYTES = 256 * 1024  # a request's writes are held back, up to this much, until its reply is read
_STOPPING = threading.Event()  # the process is going away (Ctrl-C): no call starts or retries
_EVERY_CLIENT: weakref.WeakSet[CallSockets] = weakref.WeakSet()


def normalize_host(host: str | None) -> str:
    """Return http(s)://host:port by Ollama's rules: http, port 11434, 0.0.0.0 means local."""
    raw = (host or "").strip() or DEFAULT_HOST
    scheme, sep, rest = raw.partition("://")
    port = DEFAULT_PORT
    if not sep:
        scheme, rest = "http", raw
    else:
        scheme = scheme.lower()
        port = {"http": 80, "https": 443}.get(scheme, DEFAULT_PORT)
    try:
        if scheme not in ("http", "https"):
            raise ValueError(scheme)
        split = urlsplit(f"{scheme}://{rest}")
        port = split.port or port
    except ValueError:
        raise LLMError(
            f"The Ollama address {raw!r} is not valid; write it as host:port, "
            "for example 127.0.0.1:11434."
        ) from None
    name = split.hostname or "127.0.0.1"
    if name == "0.0.0.0":
        name = "127.0.0.1"
    elif name == "::":
        name = "::1"
    if ":" in name:
        name = f"[{name}]"
    path = split.path.strip("/")
    return f"{scheme}://{name}:{port}" + (f"/{path}" if path else "")


def is_this_computer(host: str) -> bool:
    """True when the (normalised or raw) host is a loopback address, localhost or this machine's name.

    A setting with several hosts is this computer only when every one of them is.
    """
    if "," in host or "*" in host:
        from docatlas.core.base.settings_hosts import HostSettingError, host_entries

        try:
            entries = host_entries(host)
        except HostSettingError:
            return True
        return all(is_this_computer(e.address) for e in entries)
    try:
        name = (urlsplit(normalize_host(host)).hostname or "").lower()
    except LLMError:
        return True
    if name in ("localhost", "localhost.localdomain") or name == socket.gethostname().lower():
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def stop_everything() -> None:
    """The process is stopping: cut every Ollama connection and let no call start or retry."""
    _STOPPING.set()
    for sockets in list(_EVERY_CLIENT):
        sockets.cut_all()


def stopping() -> bool:
    """True once `stop_everything` ran."""
    return _STOPPING.is_set()


class CallSockets:
    """The live connections of one client, and which thread uses which one."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._streams: weakref.WeakSet[_TrackedStream] = weakref.WeakSet()
        self._by_thread: dict[int, _TrackedStream] = {}
        _EVERY_CLIENT.add(self)

    def used_by(self, stream: _TrackedStream) -> None:
        """The calling thread reads or writes `stream` now."""
        with self._lock:
            self._streams.add(stream)
            self._by_thread[threading.get_ident()] = stream

    def forget_thread(self, ident: int) -> None:
        """A call on thread `ident` ended."""
        with self._lock:
            self._by_thread.pop(ident, None)

    def cut_thread(self, ident: int) -> None:
        """Shut down the connection thread `ident` is using (its blocked read returns)."""
        with self._lock:
            stream = self._by_thread.get(ident)
        if stream is not None:
            stream.shut()

    def cut_all(self) -> None:
        """Shut down every connection of this client."""
        with self._lock:
            streams = list(self._streams)
        for stream in streams:
            stream.shut()


class _TrackedStream(httpcore.NetworkStream):
    """A network stream that tells `CallSockets` who uses it and can be shut from any thread.

    A request's pieces (its headers, its body, the empty end of the message) are sent as one
    write when its reply is first read: every send lets go of the GIL, and with four calls in
    flight getting it back can take a switch interval each time. Writes of more than
    `COALESCE_BYTES` in all go out at once (memory stays flat).
    """

    def __init__(self, inner: Any, sockets: CallSockets):
        self.inner = inner
        self.sockets = sockets
        self._pending: list[bytes] = []
        self._pending_bytes = 0
        self._timeout: float | None = None

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        self.sockets.used_by(self)
        self._flush()
        return self.inner.read(max_bytes, timeout)

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self.sockets.used_by(self)
        if not buffer:
            return
        self._pending.append(buffer)
        self._pending_bytes += len(buffer)
        self._timeout = timeout
        if self._pending_bytes > COALESCE_BYTES:
            self._flush()

    def _flush(self) -> None:
        if self._pending:
            data = b"".join(self._pending)
            self._pending.clear()
            self._pending_bytes = 0
            self.inner.write(data, self._timeout)

    def close(self) -> None:
        self._pending.clear()
        self.inner.close()

    def start_tls(self, ssl_context: Any, server_hostname: str | None = None,
                  timeout: float | None = None) -> _TrackedStream:
        return _TrackedStream(self.inner.start_tls(ssl_context, server_hostname, timeout), self.sockets)

    def get_extra_info(self, info: str) -> Any:
        return self.inner.get_extra_info(info)

    def shut(self) -> None:
        """Shut the socket down in both directions; a read blocked on it returns at once."""
        sock = self.inner.get_extra_info("socket")
        if sock is None:
            return
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass  # already closed


class _TrackingBackend:
    """httpcore's network backend, with every stream it opens tracked."""

    def __init__(self, inner: Any, sockets: CallSockets):
        self.inner = inner
        self.sockets = sockets

    def connect_tcp(self, *args: Any, **kwargs: Any) -> _TrackedStream:
        return _TrackedStream(self.inner.connect_tcp(*args, **kwargs), self.sockets)

    def connect_unix_socket(self, *args: Any, **kwargs: Any) -> _TrackedStream:
        return _TrackedStream(self.inner.connect_unix_socket(*args, **kwargs), self.sockets)

    def sleep(self, seconds: float) -> None:
        self.inner.sleep(seconds)


_tls_lock = threading.Lock()
_tls_context: ssl.SSLContext | None = None
_no_tls_context: ssl.SSLContext | None = None


def shared_tls_context() -> ssl.SSLContext:
    """httpx's default verifying TLS context, made once per process and shared by every client.

    Each client used to load the certificate bundle again (about 35 ms of CPU under the GIL),
    also for plain-http hosts: the window's Ollama watch makes a client every 1.5 s, and a
    question makes two. A context is safe to share between clients and threads.
    """
    global _tls_context
    with _tls_lock:
        if _tls_context is None:
            _tls_context = httpx.create_ssl_context()
        return _tls_context


def tls_context_for(host: str, proxy: str | None) -> ssl.SSLContext:
    """The shared verifying context when `host` or its proxy is https; for plain http, one that
    trusts no certificate at all (cheap to make, and any TLS through it fails closed: an http
    host's client never loads the certificate bundle, 35 ms under the GIL in the window)."""
    global _no_tls_context
    if host.lower().startswith("https:") or (proxy or "").lower().startswith("https:"):
        return shared_tls_context()
    with _tls_lock:
        if _no_tls_context is None:
            _no_tls_context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)  # verifies, and trusts nothing
        return _no_tls_context


def new_client(settings: OllamaSettings, host: str, sockets: CallSockets | None = None,
               read_timeout: float | None = -1.0) -> OllamaHTTP:
    """An Ollama API client for `host`: no proxy unless `settings.proxy` names one; sockets tracked.

    `read_timeout` defaults to the setting's per-read timeout; None means no read timeout.
    One client keeps its connections (httpx's pool) from call to call.
    """
    read = settings.timeout_s if read_timeout == -1.0 else read_timeout
    timeout = httpx.Timeout(read, connect=settings.connect_timeout_s)
    proxy = (getattr(settings, "proxy", "") or "").strip() or None
    transport = httpx.HTTPTransport(proxy=proxy, trust_env=False, verify=tls_context_for(host, proxy))
    if sockets is not None:
        pool = transport._pool  # httpcore's pool: the one place its network backend can be set
        pool._network_backend = _TrackingBackend(pool._network_backend, sockets)
    return OllamaHTTP(host, timeout=timeout, transport=transport)
