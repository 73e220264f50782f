#!/bin/sh
# A self-signed certificate for trying TLS locally (deploy/haproxy.cfg, docs/operations.md "TLS"):
# ECDSA P-256, CN=localhost, valid for localhost and 127.0.0.1, 30 days. Writes the one PEM HAProxy
# reads (certificate, then its private key), mode 0600. Never for production: a browser warns,
# and nothing but this machine should trust it.
#   deploy/make-local-cert.sh [OUT]      # OUT: deploy/certs/fromagerie.pem by default
# Refuses to overwrite OUT (remove it first to make a new one).
set -eu
out="${1:-$(dirname "$0")/certs/fromagerie.pem}"
command -v openssl >/dev/null 2>&1 || { echo "make-local-cert: openssl is not installed (apt-get install openssl)" >&2; exit 1; }
if [ -e "$out" ]; then
  echo "make-local-cert: $out exists; remove it first to make a new one" >&2
  exit 1
fi
mkdir -p "$(dirname "$out")"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# The key is never readable by others, not even for a moment.
umask 077
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
  -keyout "$work/key.pem" -out "$work/cert.pem" -days 30 -sha256 \
  -subj /CN=localhost -addext subjectAltName=DNS:localhost,IP:127.0.0.1 \
  -addext extendedKeyUsage=serverAuth 2>/dev/null
cat "$work/cert.pem" "$work/key.pem" > "$work/combined.pem"
chmod 600 "$work/combined.pem"
mv "$work/combined.pem" "$out"
echo "make-local-cert: wrote $out (self-signed, CN=localhost, 30 days, mode 0600)"
