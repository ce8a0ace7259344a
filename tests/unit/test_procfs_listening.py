"""What a process listens on, read from /proc as the sandbox's start reads its mysqld's:
checked against sockets this process opens itself."""
import os
import socket

import pytest

from harness import procfs


def test_the_addresses_a_process_listens_on_and_only_those():
    v4 = socket.socket(socket.AF_INET)
    v4.bind(("127.0.0.1", 0))
    v4.listen()
    wide = socket.socket(socket.AF_INET)
    wide.bind(("0.0.0.0", 0))
    wide.listen()
    bound = socket.socket(socket.AF_INET)  # bound, not listening: not a listener
    bound.bind(("127.0.0.1", 0))
    try:
        heard = procfs.listening(os.getpid())
        assert f"127.0.0.1:{v4.getsockname()[1]}" in heard, heard
        assert f"0.0.0.0:{wide.getsockname()[1]}" in heard, heard
        assert not any(h.endswith(f":{bound.getsockname()[1]}") for h in heard), heard
    finally:
        port = v4.getsockname()[1]
        for s in (v4, wide, bound):
            s.close()
    assert f"127.0.0.1:{port}" not in procfs.listening(os.getpid())  # closed: gone


def test_an_ipv6_listener_is_shown_in_brackets():
    if not socket.has_ipv6:
        pytest.skip("no IPv6 in this kernel")
    s = socket.socket(socket.AF_INET6)
    try:
        s.bind(("::1", 0))
    except OSError as e:
        s.close()
        pytest.skip(f"::1 cannot be bound here ({e})")
    s.listen()
    try:
        assert f"[::1]:{s.getsockname()[1]}" in procfs.listening(os.getpid())
    finally:
        s.close()
