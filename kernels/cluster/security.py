"""Mutual TLS for a cluster that listens beyond loopback: `raytracer-app cluster certs DIR` makes a CA, a server
certificate (the scheduler's and its workers') and a client certificate (each laptop's), all signed by the
CA; Dask's ``distributed.security.Security`` then admits only peers whose certificate the CA signed, both
ways. Whoever holds the client certificate can run code on the workers: give it to trusted people only.

Making them takes the ``cryptography`` package (the `cluster-certs` extra, about 17 MB installed) or, without
it, the ``openssl`` command; using them takes neither (Dask's TLS is Python's own ssl module), so a laptop
that only connects needs the `cluster` extra alone."""

from __future__ import annotations

import datetime
import ipaddress
import os
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

from kernels.errors import InputError

CA, SERVER, CLIENT = "ca", "server", "client"
DAYS = 825  # the longest validity common TLS stacks accept for a leaf certificate
OPENSSL_TIMEOUT_S = 30
NO_MAKER = ("`cluster certs` makes keys with the cryptography package or the openssl command, and this machine "
            "has neither: pip install -e '.[cluster-certs]' (only where certificates are made; a laptop that "
            "connects needs the files, not the package)")


def paths(folder) -> dict:
    """{name: (certificate, key)} of the files in ``folder``."""
    folder = Path(folder)
    return {n: (folder / f"{n}.pem", folder / f"{n}-key.pem") for n in (CA, SERVER, CLIENT)}


def make_certificates(folder, hosts: list[str] | None = None, maker: str | None = None) -> list[Path]:
    """A CA, a server certificate for ``hosts`` (and this host's names, localhost and loopback) and a client
    certificate in ``folder`` (created, mode 0700; keys mode 0600). Returns the files written. ``maker``:
    'cryptography' or 'openssl' (default: the package where it is installed, else the command); InputError
    in one line when neither is here."""
    maker = maker or ("cryptography" if _has_cryptography() else "openssl" if shutil.which("openssl") else None)
    if maker is None:
        raise InputError(NO_MAKER)
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    made = _with_cryptography(_host_names(hosts)) if maker == "cryptography" else _with_openssl(_host_names(hosts))
    written = []
    for who, (cert_path, key_path) in paths(folder).items():
        cert, key = made[who]
        _write(cert_path, cert, 0o644)
        _write(key_path, key, 0o600)
        written += [cert_path, key_path]
    return written


def _has_cryptography() -> bool:
    import importlib.util

    return importlib.util.find_spec("cryptography") is not None


def _host_names(hosts) -> list[str]:
    """The server certificate's names: ``hosts``, this host's name, localhost and loopback."""
    return [*sorted({"localhost", socket.gethostname(), *(hosts or [])}), "127.0.0.1", "::1"]


def _is_ip(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
        return True
    except ValueError:
        return False


def _with_cryptography(host_names: list[str]) -> dict:
    """{who: (certificate PEM, key PEM)} made with the cryptography package."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

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
    alt = [x509.IPAddress(ipaddress.ip_address(h)) if _is_ip(h) else x509.DNSName(h) for h in host_names]
    both = (ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH)  # workers dial the scheduler too
    made = {CA: (ca_cert, ca_key)}
    for who, names, usage in ((SERVER, alt, both), (CLIENT, (), (ExtendedKeyUsageOID.CLIENT_AUTH,))):
        key = ec.generate_private_key(ec.SECP256R1())
        made[who] = (issue(name(f"raytracer-app cluster {who}"), key, ca_cert.subject, ca_key, False, names, usage),
                     key)
    return {who: (cert.public_bytes(serialization.Encoding.PEM),
                  key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                    serialization.NoEncryption())) for who, (cert, key) in made.items()}


# the same three certificates from the openssl command: P-256 keys, SHA-256, the same extensions
_OPENSSL_CONFIG = """[req]
distinguished_name = dn
prompt = no
[dn]
CN = unused
[ca]
basicConstraints = critical,CA:TRUE
keyUsage = critical,keyCertSign,cRLSign
subjectKeyIdentifier = hash
[server]
basicConstraints = critical,CA:FALSE
subjectAltName = {alt}
extendedKeyUsage = serverAuth,clientAuth
[client]
basicConstraints = critical,CA:FALSE
extendedKeyUsage = clientAuth
"""


def _with_openssl(host_names: list[str]) -> dict:
    """{who: (certificate PEM, key PEM)} made with the openssl command, in a private folder removed after."""
    import secrets

    alt = ",".join(f"IP:{h}" if _is_ip(h) else f"DNS:{h}" for h in host_names)
    with tempfile.TemporaryDirectory(prefix="raytracer-certs-") as tmp:  # mode 0700: the keys are never seen
        work = Path(tmp)
        (work / "openssl.cnf").write_text(_OPENSSL_CONFIG.format(alt=alt))

        def run(*args):
            try:
                subprocess.run(["openssl", *args], cwd=work, check=True, capture_output=True, text=True,
                               timeout=OPENSSL_TIMEOUT_S, stdin=subprocess.DEVNULL)
            except subprocess.CalledProcessError as exc:
                last = (exc.stderr or "").strip().splitlines()
                raise RuntimeError(f"openssl {args[0]} failed: {last[-1] if last else exc}") from None

        for who in (CA, SERVER, CLIENT):
            run("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", f"{who}-key.pem")
        days = str(DAYS)
        run("req", "-new", "-x509", "-key", "ca-key.pem", "-out", "ca.pem", "-days", days, "-sha256",
            "-config", "openssl.cnf", "-extensions", "ca", "-subj", "/CN=raytracer-app cluster CA")
        for who in (SERVER, CLIENT):
            run("req", "-new", "-key", f"{who}-key.pem", "-out", f"{who}.csr", "-config", "openssl.cnf",
                "-subj", f"/CN=raytracer-app cluster {who}")
            run("x509", "-req", "-in", f"{who}.csr", "-CA", "ca.pem", "-CAkey", "ca-key.pem", "-out", f"{who}.pem",
                "-days", days, "-sha256", "-set_serial", f"0x{secrets.token_hex(16)}", "-extfile", "openssl.cnf",
                "-extensions", who)
        from kernels.io.reader import read_bytes

        def pem(name):
            return read_bytes(work / name, "openssl's output", 1 << 16, "a PEM certificate or key is small")

        return {who: (pem(f"{who}.pem"), pem(f"{who}-key.pem")) for who in (CA, SERVER, CLIENT)}


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
