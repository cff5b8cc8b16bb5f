"""A CA bundle of one lone self-signed certificate (no key anywhere), for the whole suite.

No test speaks TLS, yet every httpx client loads the CA bundle when it is
created (~50 ms of CPU for the system bundle, three times per google-genai
client): with thousands of clients that was a large share of the suite's time.
``SSL_CERT_FILE`` pointing here makes each load a one-certificate parse.
"""

from __future__ import annotations

from pathlib import Path

ONE_CERT = """\
-----BEGIN CERTIFICATE-----
MIIBvjCCAWWgAwIBAgIUT5qiQqhjK7iTtStJ7aPXA9Xy7GEwCgYIKoZIzj0EAwIw
NDEyMDAGA1UEAwwpbGxtcG9ydCBjb250cmFjdCB0ZXN0cyAobm8gVExTIGlzIHNw
b2tlbikwIBcNMjYxMTIzMjIyMTQ5WhgPMjEyNjEwMzAyMjIxNDlaMDQxMjAwBgNV
BAMMKWxsbXBvcnQgY29udHJhY3QgdGVzdHMgKG5vIFRMUyBpcyBzcG9rZW4pMFkw
EwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE3AV0sSEwAFZyRQQsrnjR/0/my0tZ5/6C
EgFztjDYyEe+5nrkE+zXaYlek66ztQPv6yd4mbinI4iIobJf99AtQKNTMFEwHQYD
VR0OBBYEFO7JpzWwzVRYKIy2ZgwzbqXpxr3KMB8GA1UdIwQYMBaAFO7JpzWwzVRY
KIy2ZgwzbqXpxr3KMA8GA1UdEwEB/wQFMAMBAf8wCgYIKoZIzj0EAwIDRwAwRAIg
fHskqP4SFuArrCGQsO76TDdfCvdrslcH05aeRnI8ZzcCIGQtzK4fHm5kRlYf1eOv
JLsNB6S7QAPwL/ur7sqq8Nnb
-----END CERTIFICATE-----
"""


def write_one_cert_bundle(folder: Path) -> Path:
    """``folder/one-cert.pem``: the bundle, written."""
    path = folder / "one-cert.pem"
    path.write_text(ONE_CERT)
    return path
