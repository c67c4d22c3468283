"""llm_aai.hosts: the Host headers a loopback server answers, and the ones it refuses."""

from __future__ import annotations

import ipaddress

import pytest

from llm_aai.hosts import LOOPBACK_NAMES, host_allowed, host_name, loopback_names


@pytest.mark.parametrize(("bound", "names"), [
    ("127.0.0.1", {"127.0.0.1", "localhost"}),
    ("127.0.0.2", {"127.0.0.2", "localhost"}),
    ("::1", {"::1", "localhost"}),
    ("[::1]", {"::1", "localhost"}),
    ("0:0:0:0:0:0:0:1", {"::1", "localhost"}),
    ("localhost", {"localhost", "127.0.0.1", "::1"}),
    ("LocalHost.", {"localhost", "127.0.0.1", "::1"}),
])
def test_a_loopback_server_answers_to_its_address_and_localhost(bound, names):
    assert loopback_names(bound) == names


@pytest.mark.parametrize("bound", ["0.0.0.0", "::", "192.168.1.5", "fe80::1", "lab.example"])
def test_a_server_bound_elsewhere_takes_any_host(bound):
    assert loopback_names(bound) is None
    assert host_allowed("anything.example:80", loopback_names(bound))
    assert host_allowed(None, loopback_names(bound))


def test_the_human_servers_names_are_those_of_127_0_0_1():
    assert set(LOOPBACK_NAMES) == loopback_names("127.0.0.1")


@pytest.mark.parametrize(("header", "name"), [
    ("127.0.0.1", "127.0.0.1"),
    ("127.0.0.1:8000", "127.0.0.1"),
    ("127.0.0.1:65535", "127.0.0.1"),
    ("LOCALHOST:8000", "localhost"),
    ("localhost.:8000", "localhost"),
    ("[::1]", "::1"),
    ("[::1]:8000", "::1"),
    ("[0:0:0:0:0:0:0:1]:8000", "::1"),
    ("[::FFFF:127.0.0.1]:80", str(ipaddress.IPv6Address("::ffff:127.0.0.1"))),  # as printed
    ("evil.example:8000", "evil.example"),
])
def test_host_name_is_the_header_without_its_port(header, name):
    assert host_name(header) == name


@pytest.mark.parametrize("header", [
    None, "", ".", "127.0.0.1:", "127.0.0.1:abc", "127.0.0.1:65536", "127.0.0.1:123456",
    "::1", "::1:8000", "[::1", "[::1]:", "[127.0.0.1]", "[::g]", "evil@127.0.0.1",
    "127.0.0.1/x", "127.0.0.1 evil", " 127.0.0.1", "127.0.0.1\r\nX: y", "local host",
    "127.0.0.1:8000:8000", "[::1]8000",
])
def test_a_malformed_host_header_names_no_host(header):
    assert host_name(header) is None


LOCAL = loopback_names("127.0.0.1")
LOCAL6 = loopback_names("::1")


@pytest.mark.parametrize(("header", "names", "allowed"), [
    ("127.0.0.1:8000", LOCAL, True),
    ("127.0.0.1:9999", LOCAL, True),  # an SSH tunnel's port
    ("localhost", LOCAL, True),
    ("Localhost.:8000", LOCAL, True),
    ("evil.example", LOCAL, False),
    ("evil.example:8000", LOCAL, False),
    ("127.0.0.1.evil.example", LOCAL, False),
    ("localhost.evil.example:8000", LOCAL, False),
    ("evillocalhost", LOCAL, False),
    ("127.0.0.2:8000", LOCAL, False),
    ("[::1]:8000", LOCAL, False),
    ("[::ffff:127.0.0.1]:8000", LOCAL, False),
    (None, LOCAL, False),
    ("127.0.0.1:", LOCAL, False),
    ("[::1]:8000", LOCAL6, True),
    ("[0::1]", LOCAL6, True),
    ("localhost:8000", LOCAL6, True),
    ("::1", LOCAL6, False),
    ("[::2]:8000", LOCAL6, False),
    ("127.0.0.1:8000", LOCAL6, False),
    ("evil.example:8000", LOCAL6, False),
])
def test_host_allowed(header, names, allowed):
    assert host_allowed(header, names) is allowed
