#!/usr/bin/env bash
# The TLS suite's certificates, made fresh in DIR for each test process (openssl and Java's
# keytool; nothing secret is kept in the repository):
#   ca.pem ca.key                  the CA that signs the server and the clients
#   server.p12 trust.p12           the server's PKCS12 keystore (CN=localhost, SAN 127.0.0.1) and
#                                  truststore (the CA), password "changeit"
#   holder.pem holder.key          a client; its key encrypted with password "holderpw"
#   intruder.pem intruder.key      another client of the same CA (key not encrypted)
#   expired.pem expired.key        a client whose certificate expired in 2020
#   other-ca.pem                   a CA that signs nothing here (the wrong CA for a client)
# usage: make_pki.sh DIR
set -euo pipefail
cd "${1:?usage: make_pki.sh DIR}"
days=30
quiet() { "$@" >/dev/null 2>&1 || { echo "make_pki.sh: failed: $*" >&2; "$@"; exit 1; }; }
quiet openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days $days \
  -subj "/O=zklock-test/CN=zklock test CA"
quiet openssl req -x509 -newkey rsa:2048 -nodes -keyout other-ca.key -out other-ca.pem -days $days \
  -subj "/O=elsewhere/CN=another CA"
printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth,clientAuth\n' >server.ext
quiet openssl req -newkey rsa:2048 -nodes -keyout server.key -out server.csr -subj "/O=zklock-test/CN=localhost"
quiet openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out server.pem \
  -days $days -extfile server.ext
printf 'extendedKeyUsage=clientAuth\n' >client.ext
client() {  # NAME SUBJECT [KEY PASSWORD]
  if [ -n "${3:-}" ]; then
    quiet openssl req -newkey rsa:2048 -passout "pass:$3" -keyout "$1.key" -out "$1.csr" -subj "$2"
  else
    quiet openssl req -newkey rsa:2048 -nodes -keyout "$1.key" -out "$1.csr" -subj "$2"
  fi
  quiet openssl x509 -req -in "$1.csr" -CA ca.pem -CAkey ca.key -CAcreateserial -out "$1.pem" \
    -days $days -extfile client.ext
}
client holder "/O=zklock-test/CN=holder" holderpw
client intruder "/O=zklock-test/CN=intruder"
# Expired: `openssl ca` can back-date a certificate (x509 -req cannot in OpenSSL 3.0).
mkdir -p expca && : >expca/index.txt && echo 1000 >expca/serial
cat >expca/ca.cnf <<CNF
[ca]
default_ca=d
[d]
dir=./expca
database=\$dir/index.txt
serial=\$dir/serial
new_certs_dir=\$dir
default_md=sha256
policy=p
copy_extensions=none
unique_subject=no
[p]
commonName=supplied
organizationName=optional
CNF
quiet openssl req -newkey rsa:2048 -nodes -keyout expired.key -out expired.csr -subj "/O=zklock-test/CN=expired"
quiet openssl ca -batch -config expca/ca.cnf -cert ca.pem -keyfile ca.key -in expired.csr -out expired.pem \
  -startdate 20200101000000Z -enddate 20200102000000Z -notext
quiet openssl pkcs12 -export -in server.pem -inkey server.key -certfile ca.pem -name server \
  -out server.p12 -passout pass:changeit
rm -f trust.p12
quiet keytool -importcert -noprompt -storetype PKCS12 -keystore trust.p12 -storepass changeit \
  -alias ca -file ca.pem
rm -f ./*.csr ./*.srl
