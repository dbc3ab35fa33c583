"""Mutual TLS for a cluster that listens beyond loopback: `raytracer-app cluster certs DIR` makes a CA, a server
certificate (the scheduler's and its workers') and a client certificate (each laptop's), all signed by the
CA; Dask's ``distributed.security.Security`` then admits only peers whose certificate the CA signed, both
ways. Whoever holds the client certificate can run code on the workers: give it to trusted people only."""

from __future__ import annotations

import datetime
import ipaddress
import os
import socket
from pathlib import Path

from kernels.errors import InputError

CA, SERVER, CLIENT = "ca", "server", "client"
DAYS = 825  # the longest validity common TLS stacks accept for a leaf certificate


def paths(folder) -> dict:
    """{name: (certificate, key)} of the files in ``folder``."""
    folder = Path(folder)
    return {n: (folder / f"{n}.pem", folder / f"{n}-key.pem") for n in (CA, SERVER, CLIENT)}


def make_certificates(folder, hosts: list[str] | None = None) -> list[Path]:
    """A CA, a server certificate for ``hosts`` (and this host's names, localhost and loopback) and a client
    certificate in ``folder`` (created, mode 0700; keys mode 0600). Returns the files written."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    now = datetime.datetime.now(datetime.timezone.utc)
    name = lambda cn: x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])  # noqa: E731

    def issue(subject, key, issuer, issuer_key, ca: bool, names=(), usage=()):
        b = (x509.CertificateBuilder().subject_name(subject).issuer_name(issuer).public_key(key.public_key())
             .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=5))
             .not_valid_after(now + datetime.timedelta(days=DAYS))
             .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
        if names:
            b = b.add_extension(x509.SubjectAlternativeName(list(names)), critical=False)
        if usage:
            b = b.add_extension(x509.ExtendedKeyUsage(list(usage)), critical=False)
        return b.sign(issuer_key, hashes.SHA256())

    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_cert = issue(name("raytracer-app cluster CA"), ca_key, name("raytracer-app cluster CA"), ca_key, True)
    host_names = sorted({"localhost", socket.gethostname(), *(hosts or [])})
    alt = []
    for h in [*host_names, "127.0.0.1", "::1"]:
        try:
            alt.append(x509.IPAddress(ipaddress.ip_address(h)))
        except ValueError:
            alt.append(x509.DNSName(h))
    both = (ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH)  # workers dial the scheduler too
    written = []
    made = {CA: (ca_cert, ca_key)}
    for who, names, usage in ((SERVER, alt, both), (CLIENT, (), (ExtendedKeyUsageOID.CLIENT_AUTH,))):
        key = ec.generate_private_key(ec.SECP256R1())
        made[who] = (issue(name(f"raytracer-app cluster {who}"), key, ca_cert.subject, ca_key, False, names, usage),
                     key)
    for who, (cert_path, key_path) in paths(folder).items():
        cert, key = made[who]
        _write(cert_path, cert.public_bytes(serialization.Encoding.PEM), 0o644)
        _write(key_path, key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()), 0o600)
        written += [cert_path, key_path]
    return written


def _write(path: Path, data: bytes, mode: int) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.chmod(path, mode)


def _need(folder, who: str, option: str = "--certs") -> tuple[str, str, str]:
    p = paths(folder)
    files = (p[CA][0], *p[who])
    missing = [f.name for f in files if not f.is_file()]
    if missing:
        raise InputError(f"{option} {folder}: lacks {', '.join(missing)} (make them with `raytracer-app cluster "
                         "certs DIR`)")
    return tuple(str(f) for f in files)


def client_security(folder, option: str = "--certs"):
    from distributed.security import Security

    ca, cert, key = _need(folder, CLIENT, option)
    return Security(tls_ca_file=ca, tls_client_cert=cert, tls_client_key=key, require_encryption=True)


def server_security(folder, option: str = "--certs"):
    """The scheduler's and its workers' settings (the server certificate serves both ends)."""
    from distributed.security import Security

    ca, cert, key = _need(folder, SERVER, option)
    return Security(tls_ca_file=ca, tls_scheduler_cert=cert, tls_scheduler_key=key, tls_worker_cert=cert,
                    tls_worker_key=key, tls_client_cert=cert, tls_client_key=key, require_encryption=True)


def dask_cli_flags(folder) -> list[str]:
    """The same settings as `dask scheduler` / `dask worker` flags."""
    ca, cert, key = _need(folder, SERVER)
    return ["--tls-ca-file", ca, "--tls-cert", cert, "--tls-key", key]
