"""Answer to ``cubetower.local`` on the table's network, whatever the Pi's own host name is.

Phones find the device by a name, not a number, and the guide promises ``http://cubetower.local/``.
avahi answers only for the Pi's host name, which the user chose (or left as ``raspberrypi``) when
writing the SD card; so the device itself publishes the name with python-zeroconf (beside avahi,
which it shares port 5353 with): an address record ``<name>.local`` for each LAN address and the
phone page as an ``_http._tcp`` service, which phones and computers list in their browsers.

Two tables in one club: before publishing, it asks whether another device already answers to the
name, and takes ``<name>-2``, ``<name>-3``, ... (and says so in the terminal); the Pi's own avahi
answering (its host name is ``cubetower`` too, as hardware/README suggests) is not another device.
The Pi's addresses change (DHCP, a Wi-Fi that comes back): they are checked every
``refresh_seconds`` and the records updated. Nothing here may stop the device: without a
network the page is still served by address.
"""

from __future__ import annotations

import contextlib
import ipaddress
import logging
import socket
import threading
from collections.abc import Callable

log = logging.getLogger(__name__)

SERVICE_TYPE = "_http._tcp.local."
MAX_SUFFIX = 9  # cubetower, cubetower-2 ... cubetower-9: a club with more tables sets names


def local_address(name: str, port: int) -> str:
    """``name.local`` with the port, which phones leave out for 80."""
    return f"{name}.local" + ("" if port == 80 else f":{port}")


def machine_addresses() -> set[str]:
    """Every address of this machine's interfaces, IPv4 and IPv6, in :func:`_plain` spelling.

    avahi answers for the host name with all of them, IPv6 ones included (a link-local
    ``fe80::`` at the least), while the addresses published here are the IPv4 ones phones use.
    Listed by ifaddr, which python-zeroconf depends on and lists interfaces with itself (its
    documentation says to use it directly), so this works wherever the announcer does; empty
    when the interfaces cannot be listed.
    """
    try:
        import ifaddr

        adapters = ifaddr.get_adapters()
    except Exception as exc:  # never stop the announcement for this
        log.debug("cannot list this machine's addresses: %s", exc)
        return set()
    found = set()
    for adapter in adapters:
        for ip in adapter.ips:
            # IPv6 comes as (address, flowinfo, scope_id)
            text = ip.ip[0] if isinstance(ip.ip, tuple) else ip.ip
            with contextlib.suppress(ValueError):
                found.add(_plain(text))
    return found


def _plain(address: str) -> str:
    """``address`` in one spelling (IPv6 compressed, lower case, without ``%interface``), so
    addresses from ifaddr, zeroconf and ``hostname -I`` compare equal."""
    return str(ipaddress.ip_address(address.split("%", 1)[0]))


class NameAnnouncer:
    """Publishes ``<name>.local`` and the phone page while the device runs.

    ``addresses`` gives the LAN's IPv4 addresses now; ``interfaces`` goes to
    ``zeroconf.Zeroconf`` (all interfaces by default; the tests use loopback); ``say`` tells the
    person at the terminal which name phones can open.
    """

    def __init__(
        self,
        name: str,
        port: int,
        addresses: Callable[[], list[str]],
        *,
        say: Callable[[str], None] = lambda text: None,
        interfaces=None,
        refresh_seconds: float = 30.0,
        probe_ms: int = 1500,
    ):
        self.wanted = name
        self.name: str | None = None  # the name published, once it is
        self._port = port
        self._addresses = addresses
        self._say = say
        self._interfaces = interfaces
        self._refresh = refresh_seconds
        self._probe_ms = probe_ms
        self._stop = threading.Event()
        self._published = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="mdns", daemon=True)
        self._thread.start()

    def wait_published(self, seconds: float) -> bool:
        return self._published.wait(seconds)

    def name_for_phones(self, wait_seconds: float = 4.0) -> str:
        """The name phones can use: the one taken (another table may answer to the one asked
        for, and this one took ``<name>-2``), waiting a little for the probe (1.5 s a name); the
        name asked for when nothing is published yet (no network: it keeps trying)."""
        self.wait_published(wait_seconds)
        return self.name or self.wanted

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)

    def _run(self) -> None:
        try:
            from zeroconf import InterfaceChoice, Zeroconf

            zc = Zeroconf(interfaces=self._interfaces or InterfaceChoice.All)
        except Exception as exc:  # no network at all, or port 5353 refused: serve by address
            log.warning("cannot announce %s.local by mDNS: %s", self.wanted, exc)
            return
        info = None
        addresses: list[str] = []
        try:
            while True:
                try:
                    now = self._current()
                    if info is None:
                        info = self._publish(zc, now)
                    elif now != addresses:
                        info = self._info(now, instance=info.name)
                        zc.update_service(info)
                        log.info("%s.local now at %s", self.name, ", ".join(now) or "no address")
                    addresses = now
                except Exception as exc:  # a busy Pi, a network going away: try again later
                    log.warning("mDNS announcement of %s.local failed (%s); trying again in "
                                "%g s, phones can use the address meanwhile", self.wanted,
                                exc or type(exc).__name__, self._refresh)
                    info = None
                    with contextlib.suppress(Exception):
                        zc.unregister_all_services()
                if self._stop.wait(self._refresh):
                    break
        finally:
            if info is not None:
                with contextlib.suppress(Exception):  # closing anyway: the records expire
                    zc.unregister_service(info)
            zc.close()

    def _publish(self, zc, addresses: list[str]):
        self.name = self._free_name(zc, addresses)
        info = self._info(addresses)
        zc.register_service(info, allow_name_change=True)
        self._published.set()
        if self.name != self.wanted:
            self._say(f"another device on this network answers to {self.wanted}.local: "
                      f"this one is http://{local_address(self.name, self._port)}/ for phones")
        log.info("announced %s.local at %s", self.name, ", ".join(addresses) or "no address")
        return info

    def _current(self) -> list[str]:
        found = []
        for address in self._addresses():
            try:
                if ipaddress.ip_address(address).version == 4:
                    found.append(address)
            except ValueError:
                continue
        return sorted(set(found))

    def _free_name(self, zc, ours: list[str]) -> str:
        """The wanted name, unless a device with other addresses answers to it already.

        An answer is this machine's own when every address in it is this machine's: avahi
        publishes the host name (``cubetower`` when the guide is followed) with each address of
        each interface, IPv6 ones too, which ``ours`` (the IPv4 addresses published here) leaves
        out; so they are compared with ``ours`` and :func:`machine_addresses` together. Another
        device answers with an address of its own, and the name is taken.
        """
        from zeroconf import AddressResolver

        mine = {_plain(a) for a in ours} | machine_addresses()
        for n in range(1, MAX_SUFFIX + 1):
            name = self.wanted if n == 1 else f"{self.wanted}-{n}"
            resolver = AddressResolver(f"{name}.local.")
            if not resolver.request(zc, self._probe_ms):
                return name
            theirs = {_plain(a) for a in resolver.parsed_addresses()}
            if theirs <= mine:  # this machine (avahi, when the host name is the same)
                return name
            log.info("%s.local answers at %s: not this device", name, ", ".join(sorted(theirs)))
        return self.wanted  # all taken: share the name rather than go without one

    def _info(self, addresses: list[str], instance: str | None = None):
        from zeroconf import ServiceInfo

        return ServiceInfo(
            SERVICE_TYPE,
            instance or f"cubetower on {self.name}.{SERVICE_TYPE}",
            port=self._port,
            addresses=[socket.inet_aton(a) for a in addresses],
            server=f"{self.name}.local.",
            properties={"path": "/"},
        )
