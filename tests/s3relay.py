"""A misbehaving S3 endpoint for tests: a TCP relay on loopback in front of a real S3
gateway (versitygw) that forwards every byte both ways until told otherwise, then

- :meth:`Relay.stall`: stops forwarding anything, in either direction, holding every
  connection open (and accepting new ones that it never answers): a service that
  accepted the connection and stopped answering in the middle of a point;
- :meth:`Relay.refuse_gets`: answers every GET itself with ``status`` (503 by default,
  an S3 error body) and forwards the rest: a service that is up but fails reads.

It counts the requests it saw (:attr:`Relay.requests`, by method) and the answers it made
up (:attr:`Relay.refused`), so a test can say how many a run should have counted. The
gateway sees each request byte for byte as the client signed it."""

from __future__ import annotations

import contextlib
import select
import socket
import threading
from collections import Counter
from collections.abc import Callable, Iterator

_HEAD_END = b"\r\n\r\n"


class Relay:
    def __init__(self, upstream: tuple[str, int]) -> None:
        self.upstream = upstream
        self.server = socket.create_server(("127.0.0.1", 0))
        self.server.settimeout(0.1)  # the accepting thread sees the relay close
        self.endpoint = f"http://127.0.0.1:{self.server.getsockname()[1]}"
        self.requests: Counter[str] = Counter()
        self.refused: Counter[str] = Counter()
        self._stalled = threading.Event()
        self._refusing: int | None = None
        self._closing = threading.Event()
        self._lock = threading.Lock()
        self._held: list[socket.socket] = []
        self._threads: list[threading.Thread] = []
        self._start(self._accept)

    def stall(self) -> None:
        """From now on forward nothing (the connections stay open)."""
        self._stalled.set()

    def refuse_gets(self, status: int = 503) -> None:
        """From now on answer every GET with ``status`` instead of forwarding it."""
        self._refusing = status

    def close(self) -> None:
        self._closing.set()
        with contextlib.suppress(OSError):
            self.server.close()
        with self._lock:
            for s in self._held:
                with contextlib.suppress(OSError):
                    s.close()
        for t in self._threads:
            t.join(10)

    def _start(self, target, *args) -> None:  # type: ignore[no-untyped-def]
        t = threading.Thread(target=target, args=args, daemon=True)
        self._threads.append(t)
        t.start()

    def _keep(self, s: socket.socket) -> socket.socket:
        with self._lock:
            self._held.append(s)
        return s

    def _accept(self) -> None:
        while not self._closing.is_set():
            try:
                client, _ = self.server.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self._keep(client)
            if self._stalled.is_set():
                continue  # accepted, never answered
            try:
                up = self._keep(socket.create_connection(self.upstream, timeout=10))
            except OSError:
                client.close()
                continue
            ended = threading.Barrier(2)  # both directions over: the sockets are closed
            self._start(self._both, self._requests, client, up, ended)
            self._start(self._both, self._pump, up, client, ended)

    def _both(
        self,
        direction: Callable[[socket.socket, socket.socket], None],
        a: socket.socket,
        b: socket.socket,
        ended: threading.Barrier,
    ) -> None:
        """One direction of a connection; when it ends (the gateway or the client closed),
        the connection ends both ways, as it would without the relay -- unless stalled
        (then both stay open until the relay closes)."""
        direction(a, b)
        if self._stalled.is_set():
            return
        for s in (a, b):
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)
        with contextlib.suppress(threading.BrokenBarrierError):
            if ended.wait(timeout=30) == 0:  # the last one out closes them
                with self._lock:
                    for s in (a, b):
                        s.close()
                        self._held.remove(s)

    def _wait_readable(self, s: socket.socket) -> bool:
        """Whether ``s`` has something to read (or hit its end) before the relay closes;
        while stalled, never."""
        while not self._closing.is_set():
            if self._stalled.is_set():
                self._closing.wait(0.1)
                continue
            try:
                if select.select([s], [], [], 0.1)[0]:
                    return True
            except (OSError, ValueError):
                return False
        return False

    def _recv(self, s: socket.socket) -> bytes:
        if not self._wait_readable(s):
            return b""
        try:
            return s.recv(65536)
        except OSError:
            return b""

    def _pump(self, src: socket.socket, dst: socket.socket) -> None:
        """Bytes from src to dst as they come (the answers)."""
        while data := self._recv(src):
            if self._stalled.is_set():
                return  # read just as the stall began: never delivered
            try:
                dst.sendall(data)
            except OSError:
                return

    def _requests(self, client: socket.socket, up: socket.socket) -> None:
        """The client's requests to the gateway one by one (head, then the body its
        Content-Length says), each counted, a GET answered here while refusing."""
        buf = b""
        while True:
            while _HEAD_END not in buf:
                data = self._recv(client)
                if not data:
                    return
                buf += data
            head, buf = buf.split(_HEAD_END, 1)
            method = head.split(b" ", 1)[0].decode(errors="replace")
            length = 0
            for line in head.split(b"\r\n")[1:]:
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value.strip() or 0)
            self.requests[method] += 1
            status = self._refusing
            if method == "GET" and status is not None:
                self.refused[method] += 1
                body = (
                    b'<?xml version="1.0" encoding="UTF-8"?><Error><Code>SlowDown</Code>'
                    b"<Message>Please reduce your request rate.</Message></Error>"
                )
                answer = (
                    f"HTTP/1.1 {status} Refused by the test relay\r\n"
                    f"Content-Type: application/xml\r\nContent-Length: {len(body)}\r\n\r\n"
                ).encode() + body
                try:
                    client.sendall(answer)
                except OSError:
                    return
                continue
            try:
                up.sendall(head + _HEAD_END)
                while length:  # the body, as it comes (after a 100 Continue, maybe)
                    if not buf:
                        buf = self._recv(client)
                        if not buf:
                            return
                    part, buf = buf[:length], buf[length:]
                    up.sendall(part)
                    length -= len(part)
            except OSError:
                return


@contextlib.contextmanager
def relay(endpoint: str) -> Iterator[Relay]:
    """A :class:`Relay` in front of the http ``endpoint`` (``http://HOST:PORT``)."""
    host, port = endpoint.removeprefix("http://").rsplit(":", 1)
    r = Relay((host, int(port)))
    try:
        yield r
    finally:
        r.close()
