"""The names a loopback server answers to: every loopback address, and DNS rebinding refused."""

from __future__ import annotations

import socket

import pytest

from llm_aai.hosts import ANY, allowed_hosts, host_allowed, same_authority
from tests.human.conftest import served

FOREIGN = ["evil.example", "evil.example:8090", "EVIL.example.", "evil.example.:8090",
           "127.0.0.1.evil.example", "localhost.evil.example", "[::2]:8090", "10.0.0.1",
           "0.0.0.0", "", " ", "[::1", "::1", "localhost:x", "localhost:", "localhost..",
           "[evil.example]:80", "localhost:80:80"]


@pytest.mark.parametrize("bound", ["127.0.0.1", "::1", "127.0.0.2", "localhost"])
@pytest.mark.parametrize("host", FOREIGN)
def test_a_loopback_server_refuses_other_names(bound, host):
    assert not host_allowed(host, allowed_hosts(bound))


@pytest.mark.parametrize(("bound", "host"), [
    ("127.0.0.1", "127.0.0.1:8090"), ("127.0.0.1", "localhost"), ("127.0.0.1", "LOCALHOST"),
    ("127.0.0.1", "localhost.:8090"), ("127.0.0.1", "LocalHost.:8090"),
    ("::1", "[::1]:8090"), ("::1", "[::1]"), ("::1", "[0:0:0:0:0:0:0:1]:8090"),
    ("::1", "localhost:8090"), ("127.0.0.2", "127.0.0.2:8090"), ("127.0.0.2", "localhost"),
])
def test_a_loopback_server_takes_its_own_names(bound, host):
    assert host_allowed(host, allowed_hosts(bound))


def test_another_loopback_address_is_not_this_ones_name():
    assert not host_allowed("127.0.0.1:8090", allowed_hosts("127.0.0.2"))
    assert not host_allowed("[::1]:8090", allowed_hosts("127.0.0.1"))
    assert not host_allowed(None, allowed_hosts("127.0.0.1"))  # no Host at all


def test_a_server_on_the_network_takes_any_name():
    assert allowed_hosts("0.0.0.0") == allowed_hosts("192.168.1.20") == (ANY,)
    assert host_allowed("study.lab.example", allowed_hosts("0.0.0.0"))


def test_an_origin_must_name_the_server_the_host_names():
    assert same_authority("LOCALHOST:8090", "localhost:8090")
    assert same_authority("[::1]:8090", "[0:0:0:0:0:0:0:1]:8090")
    assert not same_authority("evil.example:8090", "localhost:8090")
    assert not same_authority("localhost:8091", "localhost:8090")  # another port
    assert not same_authority("", "localhost:8090")  # an opaque origin ("null")
    assert not same_authority("localhost:8090", None)


def _bindable(address: str) -> bool:
    """Whether this machine has the address (no IPv6 in some containers, no 127.0.0.2 on macOS)."""
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    try:
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            probe.bind((address, 0))
    except OSError:
        return False
    return True


@pytest.mark.parametrize("bound", ["::1", "127.0.0.2"])
def test_servers_on_other_loopback_addresses_refuse_rebinding(bound, testbed_dir, tmp_path):
    if not _bindable(bound):
        pytest.skip(f"this machine cannot bind {bound}")
    with served(tmp_path, testbed_dir, host=bound) as running, running.client() as client:
        own = running.url.removeprefix("http://")
        port = own.rpartition(":")[2]
        assert client.get("/").status_code == 200
        assert client.get("/", headers={"host": f"localhost:{port}"}).status_code == 200
        for host in ("evil.example", f"evil.example:{port}", f"EVIL.EXAMPLE.:{port}",
                     f"127.0.0.1.evil.example:{port}"):
            refused = client.get("/", headers={"host": host})
            assert refused.status_code == 400, host
        attack = client.post("/api/sessions", json={"participant": "rebound"},
                             headers={"host": f"evil.example:{port}",
                                      "origin": f"http://evil.example:{port}"})
        assert attack.status_code == 400
        foreign = client.post("/api/sessions", json={"participant": "foreign"},
                              headers={"origin": f"http://evil.example:{port}"})
        assert foreign.status_code == 403
        assert not (tmp_path / "human-script-rebound").exists()
        assert not (tmp_path / "human-script-foreign").exists()
        assert client.post("/api/sessions", json={"participant": "own"},
                           headers={"origin": running.url}).status_code == 200
