#!/bin/bash
# The image's HEALTHCHECK: healthy when this node answers GET /v0/status with 200 (docs/operations.md#start-up-and-readiness).
# Plain HTTP through bash's /dev/tcp, so the image needs no curl; HTTPS (KVORUM_TLS_CERT set,
# docs/operations.md#security) through `openssl s_client`, checking the node's certificate against KVORUM_TLS_CA (the status
# needs no token). The HTTP port is this node's own entry of KVORUM_CLUSTER (ID=HOST:HTTP:GRPC,...),
# 8080 when the variable names none.
port=8080
IFS=, read -r -a entries <<<"${KVORUM_CLUSTER:-}"
for entry in "${entries[@]}"; do
  id=${entry%%=*}
  if [[ $id == "${KVORUM_NODE_ID:-n1}" || ${#entries[@]} == 1 ]]; then
    IFS=: read -r _ port _ <<<"${entry#*=}"
  fi
done
request='GET /v0/status HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n'
if [[ -n ${KVORUM_TLS_CERT:-} ]]; then
  status=$(printf "$request" | timeout 2 /bin/openssl s_client -quiet -verify_return_error \
             -CAfile "$KVORUM_TLS_CA" -connect "127.0.0.1:$port" 2>/dev/null | head -n 1) || exit 1
else
  exec 3<>"/dev/tcp/127.0.0.1/$port" || exit 1
  printf "$request" >&3
  read -r -t 2 status <&3 || exit 1
fi
[[ $status == "HTTP/1.1 200"* ]]
