"""nginx (Debian's ``/usr/sbin/nginx``; ``.ci/run`` installs it) as the tests' load balancer
(and the scale benchmark's, ``bench/scale.py``): a plain round-robin in front of a list of
upstream servers, with no affinity of any kind (no ``ip_hash``, no sticky cookie), as a
deployment with workers on several hosts has.

It listens on 127.0.0.1 on a port of its own, with its configuration, pid file, logs and
temporary files in a folder of its own (``nginx -p DIR -c DIR/nginx.conf -g "daemon off;"``),
as one process (``master_process off``: nothing to leave behind, no user to switch to when the
tests run as root), and is stopped when the block ends. What the configuration does for MCP:

* ``proxy_buffering off``: SSE events reach the client as they are sent, not when a buffer
  fills; ``proxy_read_timeout`` long enough for a quiet SSE stream (an hour by default).
* HTTP/1.1 to the upstreams with keep-alive connections (``keepalive`` in the upstream block,
  ``Connection ""``); the ``Host`` the client sent is passed on.
* ``proxy_next_upstream error timeout``: a request goes to the next upstream only when the
  connection to one fails (refused, say: a dead worker), never after an upstream answered;
  nginx never resends a POST that reached an upstream. A failed upstream is left out for
  ``fail_timeout`` seconds.
"""

from __future__ import annotations

import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit

__all__ = ["NGINX", "NginxBalancer", "nginx_binary", "running_nginx"]

NGINX = "/usr/sbin/nginx"
START_TIMEOUT = 10.0
STOP_TIMEOUT = 10.0


def nginx_binary() -> str | None:
    """Where ``nginx`` is, or None."""
    return NGINX if Path(NGINX).exists() else shutil.which("nginx")


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _upstream_address(url: str) -> str:
    """``HOST:PORT`` of an upstream given as ``http://HOST:PORT`` (a path is not allowed)."""
    parts = urlsplit(url)
    if parts.scheme != "http" or parts.hostname is None or parts.port is None or parts.path not in ("", "/"):
        raise ValueError(f"an upstream is http://HOST:PORT, not {url!r}")
    return f"{parts.hostname}:{parts.port}"


def nginx_conf(
    folder: Path,
    port: int,
    upstreams: Sequence[str],
    *,
    read_timeout: float = 3600.0,
    connect_timeout: float = 2.0,
    fail_timeout: float = 10.0,
    access_log: bool = True,
) -> str:
    """The configuration: nginx on ``127.0.0.1:port`` balancing over ``upstreams``; with
    ``access_log`` off, no line is written per request (for the benchmark)."""
    if not upstreams:
        raise ValueError("nginx needs at least one upstream")
    servers = "\n".join(
        f"        server {_upstream_address(url)} max_fails=1 fail_timeout={fail_timeout:g}s;"
        for url in upstreams
    )
    return f"""\
master_process off;
worker_processes 1;
pid {folder}/nginx.pid;
error_log {folder}/error.log warn;

events {{
    worker_connections 1024;
}}

http {{
    access_log {f"{folder}/access.log" if access_log else "off"};
    client_body_temp_path {folder}/tmp/client_body;
    proxy_temp_path {folder}/tmp/proxy;
    fastcgi_temp_path {folder}/tmp/fastcgi;
    uwsgi_temp_path {folder}/tmp/uwsgi;
    scgi_temp_path {folder}/tmp/scgi;
    client_max_body_size 8m;

    upstream mcp {{
{servers}
        keepalive 32;
    }}

    server {{
        listen 127.0.0.1:{port};

        location / {{
            proxy_pass http://mcp;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host $http_host;
            proxy_buffering off;
            proxy_request_buffering off;
            proxy_cache off;
            proxy_connect_timeout {connect_timeout:g}s;
            proxy_read_timeout {read_timeout:g}s;
            proxy_send_timeout {read_timeout:g}s;
            proxy_next_upstream error timeout;
            add_header X-Upstream $upstream_addr always;
        }}
    }}
}}
"""


class NginxBalancer:
    """One nginx process balancing over ``upstreams`` (``http://HOST:PORT`` each) from
    ``127.0.0.1:port``; :attr:`url` is ``http://127.0.0.1:PORT``. Every response carries the
    upstream(s) it came from in ``X-Upstream``."""

    def __init__(
        self,
        binary: str,
        folder: Path,
        upstreams: Sequence[str],
        port: int | None = None,
        *,
        access_log: bool = True,
    ) -> None:
        self.binary = binary
        self.folder = folder
        self.upstreams = list(upstreams)
        self.port = port or _free_port()
        self.log_requests = access_log
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        """Write the configuration, start nginx and wait until it accepts connections."""
        (self.folder / "tmp").mkdir(exist_ok=True)
        conf = self.folder / "nginx.conf"
        text = nginx_conf(self.folder, self.port, self.upstreams, access_log=self.log_requests)
        conf.write_text(text, encoding="utf-8")
        with (self.folder / "stderr.log").open("ab") as stderr:
            self.process = subprocess.Popen(
                [self.binary, "-p", str(self.folder), "-c", str(conf), "-g", "daemon off;"],
                stdin=subprocess.DEVNULL,
                stdout=stderr,
                stderr=subprocess.STDOUT,
            )
        deadline = time.monotonic() + START_TIMEOUT
        while not self._accepts():
            if self.process.poll() is not None:
                raise RuntimeError(f"nginx exited at start: {self.log_tail()}")
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"nginx did not listen within {START_TIMEOUT} s: {self.log_tail()}")
            time.sleep(0.02)

    def stop(self) -> None:
        """Stop it (SIGQUIT: a graceful stop), or kill it if it does not stop in time."""
        if self.process is None:
            return
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGQUIT)
            try:
                self.process.wait(timeout=STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                self.process.kill()
        self.process.wait(timeout=STOP_TIMEOUT)
        self.process = None

    def _accepts(self) -> bool:
        try:
            socket.create_connection(("127.0.0.1", self.port), timeout=0.5).close()
        except OSError:
            return False
        return True

    def access_log(self) -> list[str]:
        return (self.folder / "access.log").read_text(errors="replace").splitlines()

    def log_tail(self) -> str:
        texts = [
            path.read_text(errors="replace")[-2000:]
            for path in (self.folder / "stderr.log", self.folder / "error.log")
            if path.exists()
        ]
        return "\n".join(texts)


@contextmanager
def running_nginx(upstreams: Sequence[str], *, access_log: bool = True) -> Iterator[NginxBalancer]:
    """A started :class:`NginxBalancer` over ``upstreams`` in a folder of its own, stopped and
    removed at the end (``access_log``: as for :func:`nginx_conf`)."""
    binary = nginx_binary()
    if binary is None:
        raise RuntimeError("nginx is not installed (Debian: apt-get install nginx; .ci/run does)")
    with tempfile.TemporaryDirectory(prefix="mcpbind-nginx-") as folder:
        balancer = NginxBalancer(binary, Path(folder), upstreams, access_log=access_log)
        balancer.start()
        try:
            yield balancer
        finally:
            balancer.stop()
