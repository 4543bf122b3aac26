#!/usr/bin/env bash
# Builds the Kvorum node image from this machine's own files: no registry is needed (or reachable).
#
#   it-tests/image/build.sh [JAR]     (default JAR: node/target/kvorum-node.jar)
#
# Prints the image name, kvorum-node:<hash>, as its last line of stdout; progress goes to stderr.
#
# Two steps, each cached by a content hash, so a second run with the same jar costs a second:
#  1. the base kvorum-jre:<hash of the JDK and this script>: a root filesystem holding a jlink'ed
#     runtime (only the modules the node uses), the shared libraries that it, leveldbjni and Netty's
#     epoll transport load (found with ldd), bash for the HEALTHCHECK, and a non-root user; packed
#     reproducibly into a tarball and `docker import`ed.
#  2. kvorum-node:<hash of the jar, the Dockerfile and the base>: `docker build` of Dockerfile on
#     top of the base, adding the jar. Older kvorum-node tags are removed afterwards.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
JAR=$(realpath "${1:-$ROOT/node/target/kvorum-node.jar}")

die() { echo "build-image: $*" >&2; exit 1; }
log() { echo "build-image: $*" >&2; }

[[ -f $JAR ]] || die "$JAR is missing; build it with: mvn -B -q -pl node -am -DskipTests package"
command -v docker >/dev/null || die "the docker command is not installed"
docker info >/dev/null 2>&1 || die "no Docker engine answers (docker info fails); ./kvorum test starts one"

# The JDK to jlink from: JAVA_HOME, else the one `java` on PATH belongs to.
JDK=${JAVA_HOME:-$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")}
[[ -x $JDK/bin/jlink && -d $JDK/jmods ]] || die "$JDK has no jlink or no jmods; a full JDK 17 is needed"

# The modules the node needs: `jdeps --print-module-deps` over the unpacked shaded jar gives
# java.base,java.compiler,java.naming,java.sql,jdk.unsupported (java.sql brings java.logging and
# java.xml; java.compiler is only referenced by annotation-processing classes nobody loads).
# java.management serves JMX-aware libraries (Netty, logback) that look for it.
# jdk.crypto.ec: the EC keys and curves of TLS certificates (./kvorum certs makes P-256 ones).
# jdk.management: the process's open-file limit, which bounds --max-connections, and what
# Micrometer reads through it (GC notifications, process_files_*).
# java.net.http: the jar's commands that talk to a node (restore, status), run in a node's container.
MODULES=java.base,java.logging,java.management,java.naming,java.net.http,java.sql,java.xml,jdk.crypto.ec,jdk.management,jdk.unsupported

hash_of() { sha256sum | cut -c1-12; }

BASE_HASH=$( { cat "$JDK/release"; echo "$MODULES"; cat "$HERE/build.sh"; } | hash_of)
BASE=kvorum-jre:$BASE_HASH

if ! docker image inspect "$BASE" >/dev/null 2>&1; then
  log "building the base image $BASE from $JDK"
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  rootfs=$work/rootfs
  mkdir -p "$rootfs"/{opt,tmp,data,backups,etc,bin,lib64,lib/x86_64-linux-gnu}
  "$JDK/bin/jlink" --add-modules "$MODULES" --strip-debug --no-man-pages --no-header-files \
    --compress=2 --output "$rootfs/opt/jre"
  # The native libraries loaded from the jar at run time (extracted to /tmp by leveldbjni and Netty).
  mkdir -p "$work/native"
  (cd "$work/native" && "$JDK/bin/jar" xf "$JAR" META-INF/native/linux64/libleveldbjni.so \
    META-INF/native/libnetty_transport_native_epoll_x86_64.so META-INF/native/libnetty_tcnative_linux_x86_64.so)
  cp /bin/bash "$rootfs/bin/bash"
  # openssl and timeout: the HEALTHCHECK of a node that serves HTTPS.
  command -v openssl >/dev/null || die "openssl is not installed; the image's HTTPS health check needs it"
  cp "$(command -v openssl)" "$rootfs/bin/openssl"
  cp "$(command -v timeout)" "$rootfs/bin/timeout"
  cp "$(command -v head)" "$rootfs/bin/head"
  # Every shared library any of these binaries needs, and the dynamic loader. libjvm.so is found
  # through the JRE's own rpath, so ldd's "libjvm.so => not found" from the jlink'ed libs is fine.
  mapfile -t libs < <(find "$rootfs/opt/jre" "$work/native" "$rootfs/bin" -type f \( -name '*.so' -o -perm -u+x \) \
    -exec ldd {} \; 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\/lib64\// {print $1}' | sort -u)
  for lib in "${libs[@]}"; do
    case $lib in
      "$rootfs"/*) ;;                                                     # the JRE's own
      /lib64/*) cp -L "$lib" "$rootfs/lib64/" ;;
      *) cp -L "$lib" "$rootfs/lib/x86_64-linux-gnu/" ;;
    esac
  done
  [[ -f $rootfs/lib64/ld-linux-x86-64.so.2 ]] || die "ldd found no dynamic loader"
  printf 'root:x:0:0:root:/root:/bin/bash\nkvorum:x:10001:10001:kvorum:/data:/bin/bash\n' >"$rootfs/etc/passwd"
  printf 'root:x:0:\nkvorum:x:10001:\n' >"$rootfs/etc/group"
  printf 'passwd: files\ngroup: files\nhosts: files dns\n' >"$rootfs/etc/nsswitch.conf"
  chmod 1777 "$rootfs/tmp"
  chown 10001:10001 "$rootfs/data" "$rootfs/backups"
  tar -C "$rootfs" --sort=name --mtime=@0 --numeric-owner -cf "$work/rootfs.tar" .
  docker import --message "kvorum base: jlink'ed JRE ($MODULES) from $JDK" "$work/rootfs.tar" "$BASE" >/dev/null
  rm -rf "$work"
  trap - EXIT
fi

NODE_HASH=$( { sha256sum "$JAR" | cut -d' ' -f1; cat "$HERE/Dockerfile" "$HERE/healthcheck.sh"; echo "$BASE"; } | hash_of)
IMAGE=kvorum-node:$NODE_HASH

if ! docker image inspect "$IMAGE" >/dev/null 2>&1; then
  log "building $IMAGE from $JAR"
  ctx=$(mktemp -d)
  trap 'rm -rf "$ctx"' EXIT
  cp "$JAR" "$ctx/kvorum-node.jar"
  cp "$HERE/Dockerfile" "$HERE/healthcheck.sh" "$ctx/"
  DOCKER_BUILDKIT=0 docker build --quiet --build-arg "BASE=$BASE" --tag "$IMAGE" "$ctx" >/dev/null
  rm -rf "$ctx"
  trap - EXIT
  # Keep one node image: drop the tags of older jars (an image still used by a container stays).
  docker image ls --format '{{.Repository}}:{{.Tag}}' kvorum-node | grep -vxF "$IMAGE" \
    | xargs -r docker image rm >/dev/null 2>&1 || true
fi
echo "$IMAGE"
