"""The device answers to ``<name>.local``: real python-zeroconf on the loopback interface, asked
the way a phone's resolver asks (a DNS question to port 5353), not a mock of zeroconf."""

from __future__ import annotations

import socket
import subprocess
import sys
import textwrap
import time
import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest
from child_output import ChildOutput
from zeroconf import AddressResolver, DNSIncoming, DNSOutgoing, DNSQuestion, Zeroconf
from zeroconf import const as dns

from firmware import cli, mdns
from firmware.config import Config, ConfigError, ServerConfig, load_config
from firmware.mdns import NameAnnouncer

LOOPBACK = ["127.0.0.1"]


def ask(name: str, kind: int = dns._TYPE_A, seconds: float = 2.0) -> list:
    """The answers to one question sent from an ordinary port (a 'legacy unicast' query, which
    an mDNS responder answers straight back), or [] when nobody answers."""
    question = DNSOutgoing(dns._FLAGS_QR_QUERY)
    question.add_question(DNSQuestion(name, kind, dns._CLASS_IN))
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.settimeout(seconds)
        sock.sendto(question.packets()[0], ("127.0.0.1", 5353))
        try:
            data, _ = sock.recvfrom(9000)
        except TimeoutError:
            return []
    return [a for a in DNSIncoming(data).answers() if a.type == kind]


def addresses_of(name: str) -> list[str]:
    return sorted(socket.inet_ntoa(a.address) for a in ask(f"{name}.local."))


def eventually_addresses_of(name: str, wanted: list[str], seconds: float = 15) -> list[str]:
    """Asked again until ``wanted`` comes (a responder answers one record at most once a
    second, and not while it announces a change; and another responder on this machine, avahi
    or a cubetower running beside the tests, shares port 5353: the kernel hands each question,
    sent from a new port, to one of them)."""
    deadline = time.monotonic() + seconds
    while (got := addresses_of(name)) != wanted and time.monotonic() < deadline:
        time.sleep(1.1)
    return got


def eventually_ask(name: str, kind: int, done, seconds: float = 15) -> list:
    """``ask`` again until ``done(answers)`` (why: ``eventually_addresses_of``)."""
    deadline = time.monotonic() + seconds
    while not done(answers := ask(name, kind)) and time.monotonic() < deadline:
        time.sleep(1.1)
    return answers


@pytest.fixture
def name():
    return f"cubetower-test-{uuid.uuid4().hex[:8]}"


def announce(name, addresses, **kw) -> NameAnnouncer:
    announcer = NameAnnouncer(name, 8000, lambda: list(addresses), interfaces=LOOPBACK,
                              **kw)
    announcer.start()
    assert announcer.wait_published(15), "the name was not published"
    return announcer


def test_a_phone_resolves_the_name_to_the_device_and_finds_the_page(name):
    announcer = announce(name, ["192.0.2.77", "fe80::1", "not an address"])
    try:
        assert announcer.name == name
        assert eventually_addresses_of(name, ["192.0.2.77"]) == ["192.0.2.77"]
        mine = f"cubetower on {name}._http._tcp.local."
        services = [a.alias for a in eventually_ask(
            "_http._tcp.local.", dns._TYPE_PTR, lambda found: mine in [a.alias for a in found])]
        assert mine in services
        [srv] = eventually_ask(mine, dns._TYPE_SRV, bool)
        assert (srv.server, srv.port) == (f"{name}.local.", 8000)
    finally:
        announcer.close()
    assert addresses_of(name) == []  # withdrawn when the device stops


def test_a_new_address_is_published_when_the_network_changes(name):
    addresses = ["192.0.2.10"]
    announcer = announce(name, addresses, refresh_seconds=0.2)
    try:
        assert eventually_addresses_of(name, ["192.0.2.10"]) == ["192.0.2.10"]
        addresses[:] = ["192.0.2.11"]  # a new DHCP lease
        assert eventually_addresses_of(name, ["192.0.2.11"]) == ["192.0.2.11"]
    finally:
        announcer.close()


RESPONDER = textwrap.dedent(
    """
    import socket, sys
    from zeroconf import ServiceInfo, Zeroconf

    name, addresses = sys.argv[1], sys.argv[2:]
    packed = [socket.inet_pton(socket.AF_INET6 if ":" in a else socket.AF_INET, a)
              for a in addresses]
    zc = Zeroconf(interfaces=["127.0.0.1"])
    info = ServiceInfo("_http._tcp.local.", f"other {name}._http._tcp.local.", port=80,
                       addresses=packed, server=f"{name}.local.")
    zc.register_service(info)
    print("ready", flush=True)
    sys.stdin.read()  # until the test is done with it
    zc.unregister_service(info)
    zc.close()
    """
)


def resolves(host: str) -> bool:
    """Whether a phone's mDNS question for ``host`` is answered. On a thread of its own, as the
    device's announcer runs: zeroconf made in a thread with a running asyncio loop (the browser
    tests' Playwright leaves one in the main thread) joins that loop, and its blocking calls
    refuse to run there."""

    def ask_by_multicast() -> bool:
        probe = Zeroconf(interfaces=LOOPBACK)
        try:
            return AddressResolver(host).request(probe, 3000)
        finally:
            probe.close()

    with ThreadPoolExecutor(1) as pool:
        return pool.submit(ask_by_multicast).result(timeout=60)


def announce_beside(name: str, theirs: list[str], ours: list[str]) -> tuple[NameAnnouncer, list]:
    """The device announcing ``ours`` while another responder (a process of its own) answers to
    ``name.local`` with ``theirs``; that one is stopped once the device has published, and the
    device's words to the terminal come back with it."""
    other = subprocess.Popen([sys.executable, "-c", RESPONDER, name, *theirs],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        ChildOutput(other).wait_for(lambda line: line.strip() == "ready", what="ready")
        if not resolves(f"{name}.local."):
            pytest.skip("multicast over loopback does not reach another socket here")
        said: list[str] = []
        return announce(name, ours, say=said.append), said
    finally:
        # a question sent to port 5353 reaches one of the sockets there: only ours from now on
        other.stdin.close()
        other.wait(timeout=30)


def test_a_name_another_device_answers_to_gets_a_number(name):
    announcer, said = announce_beside(name, ["192.0.2.99"], ["192.0.2.12"])  # the other table's
    try:
        assert announcer.name == f"{name}-2"
        assert announcer.name_for_phones() == f"{name}-2"  # what the running text names
        assert said == [f"another device on this network answers to {name}.local: "
                        f"this one is http://{name}-2.local:8000/ for phones"]
        assert eventually_addresses_of(f"{name}-2", ["192.0.2.12"]) == ["192.0.2.12"]
    finally:
        announcer.close()


def test_the_pis_own_avahi_answering_with_ipv6_too_keeps_the_name(name, monkeypatch):
    """The Pi's host name is the name (hardware/README suggests ``cubetower``): avahi answers to
    it with the Pi's IPv4 address and its link-local IPv6 one, which the device does not publish.
    That is this machine, not another table's device."""
    link_local = "fe80::ba27:ebff:fe12:3456"  # a Pi's, from its MAC address
    monkeypatch.setattr(mdns, "machine_addresses", lambda: {"192.0.2.14", link_local})
    announcer, said = announce_beside(name, ["192.0.2.14", link_local], ["192.0.2.14"])
    try:
        assert announcer.name == name
        assert said == []
        assert eventually_addresses_of(name, ["192.0.2.14"]) == ["192.0.2.14"]
    finally:
        announcer.close()


def test_the_machines_own_addresses_are_listed_in_one_spelling():
    found = mdns.machine_addresses()
    assert "127.0.0.1" in found  # every machine has loopback
    assert all(mdns._plain(a) == a and "%" not in a for a in found)
    assert mdns._plain("FE80:0:0::BA27:EBFF:FE12:3456%wlan0") == "fe80::ba27:ebff:fe12:3456"


def test_the_device_announces_only_when_phones_can_reach_it():
    terminal = cli.Terminal()
    assert cli.name_announcer(Config(server=ServerConfig(host="127.0.0.1")), 8000, terminal) is None
    off = Config(server=ServerConfig(mdns_name=""))
    assert cli.name_announcer(off, 8000, terminal) is None


def test_an_announcer_without_a_network_leaves_the_name_asked_for(name):
    cannot = NameAnnouncer(name, 8000, lambda: [])  # never started: nothing published
    assert cannot.name_for_phones(wait_seconds=0.01) == name


def test_the_terminal_names_the_published_name_without_port_80():
    text = cli.running_text("http://192.168.1.23/", 80, None, "cubetower")
    assert "(or http://cubetower.local/ where mDNS works)" in text
    assert "http://cubetower.local:8000/" in cli.running_text("http://192.168.1.23:8000/", 8000,
                                                              None, "cubetower")


@pytest.mark.parametrize("bad", ["cubetower.local", "cube tower", "-cubetower", "x" * 64])
def test_a_wrong_mdns_name_is_a_clear_error(tmp_path, bad):
    settings = tmp_path / "config.toml"
    settings.write_text(f'[server]\nmdns_name = "{bad}"\n')
    with pytest.raises(ConfigError, match="mdns_name"):
        load_config(settings)
    settings.write_text('[server]\nmdns_name = ""\n')
    assert load_config(settings).server.mdns_name == ""


def test_an_announcement_that_fails_is_tried_again(name, monkeypatch):
    """A Pi busy at start (zeroconf gives up after 10 s) must not go without its name all
    evening."""
    from zeroconf import EventLoopBlocked

    real = Zeroconf.register_service
    failures = []

    def busy_once(self, info, *args, **kwargs):
        if not failures:
            failures.append(info.name)
            raise EventLoopBlocked()
        return real(self, info, *args, **kwargs)

    monkeypatch.setattr(Zeroconf, "register_service", busy_once)
    announcer = announce(name, ["192.0.2.13"], refresh_seconds=0.2)
    try:
        assert failures and announcer.name == name
        assert eventually_addresses_of(name, ["192.0.2.13"]) == ["192.0.2.13"]
    finally:
        announcer.close()
