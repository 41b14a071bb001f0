"""Runs inside a sandboxed episode, which has no network of its own: listens on 127.0.0.1:PORT
and carries each connection to the proxy's Unix socket (bound into the sandbox), then runs the
CLI and exits with its exit code. Standard library only: it runs on the sandbox's interpreter.

    python -I launcher.py SOCKET PORT CLI ARGS...
"""

import contextlib
import socket
import subprocess
import sys
import threading


def _pipe(source: socket.socket, sink: socket.socket) -> None:
    try:
        while chunk := source.recv(65536):
            sink.sendall(chunk)
    except OSError:
        pass
    finally:
        with contextlib.suppress(OSError):
            sink.shutdown(socket.SHUT_WR)


def _serve(listener: socket.socket, path: str) -> None:
    while True:
        client, _ = listener.accept()
        upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        upstream.connect(path)
        threading.Thread(target=_pipe, args=(client, upstream), daemon=True).start()
        threading.Thread(target=_pipe, args=(upstream, client), daemon=True).start()


def main() -> int:
    path, port, *argv = sys.argv[1:]
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", int(port)))
    listener.listen(16)
    threading.Thread(target=_serve, args=(listener, path), daemon=True).start()
    return subprocess.run(argv, check=False).returncode


if __name__ == "__main__":
    sys.exit(main())
