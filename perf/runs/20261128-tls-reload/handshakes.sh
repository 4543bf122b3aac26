#!/bin/bash
# New TLS handshakes a second against one node (openssl s_time -new), two node jars alternately.
# usage: PKI=DIR handshakes.sh ROUNDS JAR...   (DIR made by ./kvorum certs DIR n1)
R=$1; shift
for r in $(seq 1 $R); do
  for jar in "$@"; do
    d=$(mktemp -d); port=27181
    java -Xms1g -Xmx1g -XX:+UseZGC -jar $jar --data-dir $d --cluster n1=127.0.0.1:$port:27191 \
      --tls-cert $PKI/n1.pem --tls-key $PKI/n1.key --tls-ca $PKI/ca.pem > $d/log 2>&1 &
    pid=$!
    for i in $(seq 1 100); do curl -s --cacert $PKI/ca.pem https://127.0.0.1:$port/v0/status >/dev/null && break; sleep 0.2; done
    openssl s_time -connect 127.0.0.1:$port -new -time 5 >/dev/null 2>&1   # warm-up
    n=$(openssl s_time -connect 127.0.0.1:$port -new -time 10 2>/dev/null | grep "real seconds" | head -1)
    echo "r$r $(basename $jar) $n"
    kill $pid; wait $pid 2>/dev/null; rm -rf $d
  done
done
