"""Certificates for tests of TLS between services: a CA, and certificates it (or another CA) signs, written
as PEM files. `mtls_env` is the environment that turns on mTLS for every service of a stack."""

from __future__ import annotations

import datetime
import ipaddress
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

SERVER_NAME = "agentic.internal"  # the name every test certificate carries; clients check it (override)


@dataclass(frozen=True)
class Authority:
    cert: x509.Certificate
    key: ec.EllipticCurvePrivateKey
    cert_file: Path


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _validity(builder: x509.CertificateBuilder) -> x509.CertificateBuilder:
    now = datetime.datetime.now(datetime.UTC)
    return builder.not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(days=1))


def authority(folder: Path, name: str = "agentic-test-ca") -> Authority:
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        _validity(x509.CertificateBuilder())
        .subject_name(_name(name)).issuer_name(_name(name)).public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True, content_commitment=False,
                                     key_encipherment=False, data_encipherment=False, key_agreement=False,
                                     encipher_only=False, decipher_only=False), critical=True)
        .sign(key, hashes.SHA256())
    )
    folder.mkdir(parents=True, exist_ok=True)
    cert_file = folder / f"{name}.crt"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    return Authority(cert, key, cert_file)


def issue(ca: Authority, folder: Path, name: str, dns_names: tuple[str, ...] = (SERVER_NAME, "localhost")) -> tuple[Path, Path]:
    """A certificate for servers and clients alike (serverAuth and clientAuth), for `dns_names` and 127.0.0.1;
    returns (certificate file, key file)."""
    key = ec.generate_private_key(ec.SECP256R1())
    names: list[x509.GeneralName] = [x509.DNSName(dns) for dns in dns_names]
    names.append(x509.IPAddress(ipaddress.ip_address("127.0.0.1")))
    cert = (
        _validity(x509.CertificateBuilder())
        .subject_name(_name(name)).issuer_name(ca.cert.subject).public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]),
                       critical=False)
        .sign(ca.key, hashes.SHA256())
    )
    cert_file, key_file = folder / f"{name}.crt", folder / f"{name}.key"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return cert_file, key_file


def grpc_env(ca: Path, cert: tuple[Path, Path] | None, *, client_auth: bool = True,
             server_name: str | None = SERVER_NAME) -> dict[str, str]:
    """The `AGENTIC_GRPC_TLS_*` settings of a service with this CA and (certificate, key)."""
    env = {"AGENTIC_GRPC_TLS_CA_FILE": str(ca), "AGENTIC_GRPC_TLS_CLIENT_AUTH": "true" if client_auth else "false"}
    if cert:
        env.update({"AGENTIC_GRPC_TLS_CERT_FILE": str(cert[0]), "AGENTIC_GRPC_TLS_KEY_FILE": str(cert[1])})
    if server_name:
        env["AGENTIC_GRPC_TLS_SERVER_NAME"] = server_name
    return env


def mtls_env(folder: Path) -> dict[str, str]:
    """mTLS between every service: one CA, one certificate for all (each service could have its own)."""
    ca = authority(folder)
    return grpc_env(ca.cert_file, issue(ca, folder, "service"))
