#!/usr/bin/env python3
"""Real counterparts for staffcast's delivery tests (Tests/StaffcastIntegrationTests/ReachTests.swift):
code nobody here wrote checks what staffcast sends.

  push     an HTTPS push service on loopback (self-signed certificate, written to --ca). It makes
           subscription keys, prints them, and for each request decrypts the body with PyPI
           http-ece (RFC 8291 aes128gcm) and verifies the VAPID JWT (RFC 8292) with cryptography.
           Paths: /ok/* answer 201, /gone/* 410, /flaky/* 503 the first time then 201.
  webhook  an HTTP receiver that checks X-Staffcast-Signature (HMAC-SHA256 with --secret).
           Paths: /ok answer 204, /fail2 500 to the first two attempts of each delivery then 200,
           /moved 302 to https://hooks.example.org/new-home.
  smtp     an aiosmtpd SMTP server on loopback that prints each message; with --ca it offers and
           requires STARTTLS (self-signed certificate written to --ca), with --user/--password it
           requires AUTH.

The first stdout line is JSON describing the counterpart ({"port": …, …}); then one JSON line per
request received. It runs until stdin closes or it is killed.
"""
import argparse
import asyncio
import base64
import datetime
import hashlib
import hmac
import json
import os
import socket
import ssl
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

lock = threading.Lock()


def emit(obj):
    with lock:
        sys.stdout.write(json.dumps(obj, sort_keys=True) + "\n")
        sys.stdout.flush()


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64url(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def wait_for_stdin_close():
    try:
        sys.stdin.read()
    except Exception:
        pass
    os._exit(0)


class RecordingHandler(BaseHTTPRequestHandler):
    """What the HTTP counterparts (push, webhook) share: no access log (the JSON lines on stdout
    are the record), the request body read whole, and answers without a body."""

    def log_message(self, *a):
        pass

    def body(self):
        return self.rfile.read(int(self.headers.get("Content-Length", "0")))

    def answer(self, status, location=None):
        self.send_response(status)
        self.send_header("Content-Length", "0")
        if location:
            self.send_header("Location", location)
        self.end_headers()


def serve_until_stdin_closes(server):
    threading.Thread(target=wait_for_stdin_close, daemon=True).start()
    server.serve_forever()


# ---------------------------------------------------------------------------------------- push
def self_signed(ca_path, key_path):
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID
    import ipaddress

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "staffcast test push service")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
                                                        x509.DNSName("localhost")]), critical=False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    with open(ca_path, "wb") as f:
        f.write(cert.public_bytes(serialization.Encoding.PEM))
    with open(key_path, "wb") as f:
        f.write(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                  serialization.NoEncryption()))


def verify_vapid(header, origin):
    """Checks `Authorization: vapid t=JWT, k=KEY`: ES256 signature with k, aud, exp, sub."""
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

    out = {"vapid_ok": False}
    if not header or not header.startswith("vapid "):
        out["vapid_error"] = "no vapid authorization"
        return out
    parts = dict(p.strip().split("=", 1) for p in header[len("vapid "):].split(","))
    token, k = parts.get("t", ""), parts.get("k", "")
    out["k"] = k
    try:
        head64, claims64, sig64 = token.split(".")
        head = json.loads(unb64url(head64))
        claims = json.loads(unb64url(claims64))
        sig = unb64url(sig64)
        public = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), unb64url(k))
        der = encode_dss_signature(int.from_bytes(sig[:32], "big"), int.from_bytes(sig[32:], "big"))
        public.verify(der, (head64 + "." + claims64).encode(), ec.ECDSA(hashes.SHA256()))
        now = datetime.datetime.now(datetime.timezone.utc).timestamp()
        out.update(jwt_header=head, claims=claims)
        problems = []
        if head.get("alg") != "ES256":
            problems.append("alg is not ES256")
        if claims.get("aud") != origin:
            problems.append("aud %r is not %r" % (claims.get("aud"), origin))
        if not (now < claims.get("exp", 0) <= now + 86400):
            problems.append("exp not within 24 h")
        if not claims.get("sub"):
            problems.append("no sub")
        out["vapid_ok"] = not problems
        if problems:
            out["vapid_error"] = "; ".join(problems)
    except InvalidSignature:
        out["vapid_error"] = "bad signature"
    except Exception as e:  # anything malformed is a failure to report, not a crash
        out["vapid_error"] = "malformed: %r" % (e,)
    return out


def run_push(args):
    import http_ece
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    key_path = args.ca + ".key"
    self_signed(args.ca, key_path)
    subscriptions = {}
    keys = {}
    for name in ("ok", "gone", "flaky"):
        private = ec.generate_private_key(ec.SECP256R1())
        auth = os.urandom(16)
        public = private.public_key().public_bytes(serialization.Encoding.X962,
                                                   serialization.PublicFormat.UncompressedPoint)
        keys[name] = (private, auth)
        subscriptions[name] = {"p256dh": b64url(public), "auth": b64url(auth)}
    seen_flaky = set()

    class Handler(RecordingHandler):
        def do_POST(self):
            body = self.body()
            name = self.path.strip("/").split("/")[0]
            record = {"path": self.path, "headers": {k.lower(): v for k, v in self.headers.items()}}
            status = {"ok": 201, "gone": 410}.get(name, 201)
            if name == "flaky":
                topic = self.headers.get("Topic", "")
                status = 201 if topic in seen_flaky else 503
                seen_flaky.add(topic)
            if name in keys:
                private, auth = keys[name]
                try:
                    plain = http_ece.decrypt(body, private_key=private, auth_secret=auth, version="aes128gcm")
                    record["plaintext"] = plain.decode("utf-8")
                except Exception as e:
                    record["decrypt_error"] = repr(e)
            record.update(verify_vapid(self.headers.get("Authorization"), "https://127.0.0.1:%d" % port))
            record["answered"] = status
            emit(record)
            self.answer(status, location="/message/1" if status == 201 else None)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    port = server.server_address[1]
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(args.ca, key_path)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    base = "https://127.0.0.1:%d" % port
    for name, s in subscriptions.items():
        s["endpoint"] = "%s/%s/%s" % (base, name, b64url(os.urandom(8)))
    emit({"port": port, "ca": args.ca, "subscriptions": subscriptions})
    serve_until_stdin_closes(server)


# ------------------------------------------------------------------------------------- webhook
def run_webhook(args):
    attempts = {}

    class Handler(RecordingHandler):
        def do_POST(self):
            body = self.body()
            delivery = self.headers.get("X-Staffcast-Delivery", "")
            expected = "sha256=" + hmac.new(args.secret.encode(), body, hashlib.sha256).hexdigest()
            signature = self.headers.get("X-Staffcast-Signature", "")
            attempts[delivery] = attempts.get(delivery, 0) + 1
            status = 204
            if self.path.startswith("/fail2") and attempts[delivery] <= 2:
                status = 500
            if self.path.startswith("/moved"):
                status = 302
            try:
                payload = json.loads(body)
            except Exception:
                payload = None
            emit({"path": self.path, "delivery": delivery, "attempt": attempts[delivery],
                  "signature_ok": hmac.compare_digest(expected, signature), "payload": payload,
                  "answered": status})
            self.answer(status, location="https://hooks.example.org/new-home" if status == 302 else None)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    emit({"port": server.server_address[1]})
    serve_until_stdin_closes(server)


# ---------------------------------------------------------------------------------------- smtp
def run_smtp(args):
    from aiosmtpd.controller import Controller
    from aiosmtpd.smtp import AuthResult

    class Recorder:
        async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
            # A mailbox that does not exist, for a refusal with a reason to report.
            if address.startswith("nobody@"):
                return "550 5.1.1 No such mailbox here"
            envelope.rcpt_tos.append(address)
            return "250 OK"

        async def handle_DATA(self, server, session, envelope):
            if args.slow:
                emit({"data_started": envelope.rcpt_tos})
                await asyncio.sleep(args.slow)
            emit({"mail_from": envelope.mail_from, "rcpt_tos": envelope.rcpt_tos,
                  "data": envelope.content.decode("utf-8", "replace"),
                  "tls": session.ssl is not None, "authenticated": bool(session.authenticated)})
            return "250 OK"

    def authenticator(server, session, envelope, mechanism, auth_data):
        ok = (getattr(auth_data, "login", b"") == (args.user or "").encode()
              and getattr(auth_data, "password", b"") == (args.password or "").encode())
        return AuthResult(success=ok)

    options = {}
    if args.ca:
        # STARTTLS offered and required; a client that does not upgrade cannot send.
        self_signed(args.ca, args.ca + ".key")
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(args.ca, args.ca + ".key")
        options.update(tls_context=context, require_starttls=True)
    if args.user:
        options.update(auth_required=True, auth_require_tls=bool(args.ca), authenticator=authenticator)
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    controller = Controller(Recorder(), hostname="127.0.0.1", port=port, **options)
    controller.start()
    emit({"port": port, "ca": args.ca})
    wait_for_stdin_close()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("kind", choices=["push", "webhook", "smtp"])
    parser.add_argument("--ca", help="push, smtp: where to write the service's certificate (the CA to trust); "
                                     "smtp: offers and requires STARTTLS")
    parser.add_argument("--user", help="smtp: require AUTH with this user (and --password)")
    parser.add_argument("--password", help="smtp: the password --user must give")
    parser.add_argument("--secret", help="webhook: the secret the signature is checked with")
    parser.add_argument("--slow", type=float, default=0, help="smtp: seconds to wait before answering each message's data")
    args = parser.parse_args()
    {"push": run_push, "webhook": run_webhook, "smtp": run_smtp}[args.kind](args)


if __name__ == "__main__":
    main()
