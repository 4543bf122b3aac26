#!/bin/bash
# The image's HEALTHCHECK: healthy when this node answers GET /v0/status with 200 (SPEC §1).
# Bash only (/dev/tcp), so the image needs no curl. The HTTP port is this node's own entry of
# KVORUM_CLUSTER (ID=HOST:HTTP:GRPC,...), 8080 when the variable names none.
port=8080
IFS=, read -r -a entries <<<"${KVORUM_CLUSTER:-}"
for entry in "${entries[@]}"; do
  id=${entry%%=*}
  if [[ $id == "${KVORUM_NODE_ID:-n1}" || ${#entries[@]} == 1 ]]; then
    IFS=: read -r _ port _ <<<"${entry#*=}"
  fi
done
exec 3<>"/dev/tcp/127.0.0.1/$port" || exit 1
printf 'GET /v0/status HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n' >&3
read -r -t 2 status <&3 || exit 1
[[ $status == "HTTP/1.1 200"* ]]
