#!/usr/bin/env bash
# Prove deploy/Dockerfile on this machine with no container registry: make a Debian bookworm
# base with debootstrap (minbase, python3, python3-venv) from Debian's packages, import it into
# buildah, build the image with `buildah bud --isolation chroot`, then start the image's own
# entrypoint and default command (`fairway serve --host 0.0.0.0`, here on a free port) with
# `buildah run --isolation chroot` until it answers /health and /ready; check that it wrote
# nothing outside its data volume, run the image's HEALTHCHECK command inside it, and stop it
# with SIGTERM. deploy/README.md ("The proof on this machine") has what it printed here.
#
# Needs root and Debian's buildah and debootstrap (installed with apt-get when missing).
# Rerunnable: the debootstrapped root filesystem is kept in $WORK and reused; the image
# storage is $WORK's own (nothing touches /var/lib/containers); `rm -rf $WORK` removes it all.
#
#   sudo deploy/prove_image.sh
#   PROOF_DATABASE_URL=postgresql://postgres@127.0.0.1:5432/postgres sudo -E deploy/prove_image.sh
#
# With PROOF_DATABASE_URL (a database the script may create a scratch database next to) it
# also runs `fairway migrate` from the image into a fresh database and serves from it,
# checking /ready.
#
# Settings (environment): WORK (default /var/tmp/fairway-image-proof), MIRROR (default
# http://deb.debian.org/debian), STORAGE_DRIVER (overlay; vfs where overlay cannot mount),
# PORT (default: a free one), FRESH_BASE=1 to debootstrap again, REUSE_IMAGE=1 to skip the
# build when the image is already there, CA_BUNDLE (below).
set -euo pipefail

REPO=$(cd "$(dirname "$0")/.." && pwd)
WORK=${WORK:-/var/tmp/fairway-image-proof}
MIRROR=${MIRROR:-http://deb.debian.org/debian}
STORAGE_DRIVER=${STORAGE_DRIVER:-overlay}
BASE_IMAGE=localhost/fairway-base:bookworm
IMAGE=localhost/fairway:proof
SUITE=bookworm

say() { printf '\n== %s\n' "$*"; }
now() { date +%s.%N; }
seconds() { python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$1" "$2"; }

if [ "$(id -u)" -ne 0 ]; then
  echo "prove_image.sh: run as root (debootstrap and buildah's chroot isolation need it)" >&2
  exit 2
fi
if ! command -v buildah >/dev/null || ! command -v debootstrap >/dev/null; then
  say "installing buildah, debootstrap and fuse-overlayfs from Debian's packages"
  apt-get update -q
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q buildah debootstrap fuse-overlayfs
fi
mkdir -p "$WORK"
STORE=(--root "$WORK/storage" --runroot "$WORK/run" --storage-driver "$STORAGE_DRIVER")
b() { buildah "${STORE[@]}" "$@"; }

say "tools"
buildah --version
debootstrap --version
echo "storage: $WORK/storage ($STORAGE_DRIVER)"

# 1. The base: Debian's packages only, no registry.
ROOTFS="$WORK/rootfs-$SUITE"
if [ "${FRESH_BASE:-0}" = 1 ] || [ ! -x "$ROOTFS/usr/bin/python3" ]; then
  rm -rf "$ROOTFS"
  say "debootstrap $SUITE (minbase, python3, python3-venv) from $MIRROR"
  started=$(now)
  debootstrap --variant=minbase --include=python3,python3-venv "$SUITE" "$ROOTFS" "$MIRROR" \
    >"$WORK/debootstrap.log" 2>&1 || { tail -20 "$WORK/debootstrap.log"; exit 1; }
  echo "debootstrap took $(seconds "$started" "$(now)") s"
else
  say "reusing the $SUITE root filesystem in $ROOTFS (FRESH_BASE=1 to make it again)"
fi
# What apt downloaded and indexed is no part of an image.
rm -rf "$ROOTFS"/var/cache/apt/archives/*.deb "$ROOTFS"/var/lib/apt/lists/*
chroot "$ROOTFS" python3 --version

if [ "${REUSE_IMAGE:-0}" = 1 ] && b inspect --type image "$IMAGE" >/dev/null 2>&1; then
  say "reusing the image $IMAGE (REUSE_IMAGE=1)"
  built="not this run (REUSE_IMAGE=1)"
else
  say "importing it as $BASE_IMAGE (buildah from scratch, mount, copy, commit)"
  b rmi -f "$IMAGE" "$BASE_IMAGE" >/dev/null 2>&1 || true
  ctr=$(b from scratch)
  mnt=$(b mount "$ctr")
  cp -a "$ROOTFS"/. "$mnt"/
  b umount "$ctr" >/dev/null
  b config --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    --env LANG=C.UTF-8 --cmd /bin/bash "$ctr"
  b commit --quiet "$ctr" "$BASE_IMAGE" >/dev/null
  b rm "$ctr" >/dev/null

  # 2. The image, from the repository's root as its context. The build fetches uv, the locked
  # dependencies and hatchling from PyPI; the host's CA bundle goes in as a build secret, for a
  # host that reaches PyPI through a TLS-intercepting proxy (CA_BUNDLE= to leave it out).
  CA_BUNDLE=${CA_BUNDLE-/etc/ssl/certs/ca-certificates.crt}
  SECRET=()
  if [ -n "$CA_BUNDLE" ]; then SECRET=(--secret "id=ca-certificates,src=$CA_BUNDLE"); fi
  say "buildah bud --isolation chroot --build-arg BASE=$BASE_IMAGE -f deploy/Dockerfile"
  started=$(now)
  (cd "$REPO" && b bud --isolation chroot --format docker "${SECRET[@]}" \
    --ignorefile deploy/Dockerfile.dockerignore \
    --build-arg BASE="$BASE_IMAGE" -f deploy/Dockerfile -t "$IMAGE" .) >"$WORK/build.log" 2>&1 \
    || { tail -40 "$WORK/build.log"; exit 1; }
  built="$(seconds "$started" "$(now)") s"
  grep -E 'STEP [0-9]' "$WORK/build.log"
  echo "build took $built (log: $WORK/build.log)"
fi

say "the image"
b images --format '{{.Name}}:{{.Tag}}  {{.Size}}' "$BASE_IMAGE"
b images --format '{{.Name}}:{{.Tag}}  {{.Size}}' "$IMAGE"
config() {  # config FIELD: one field of the image's config (Docker format); a list one a line
  b inspect --type image "$IMAGE" | python3 -c '
import json, sys
value = json.load(sys.stdin)["Docker"]["config"].get(sys.argv[1])
print("\n".join(value) if isinstance(value, list) else value if isinstance(value, str) else json.dumps(value))
' "$1"
}
mapfile -t entrypoint < <(config Entrypoint)
mapfile -t command < <(config Cmd)
user=$(config User)
echo "user: $user"
echo "entrypoint: ${entrypoint[*]}"
echo "cmd: ${command[*]}"
echo "volumes: $(config Volumes)"
echo "healthcheck: $(config Healthcheck)"

# 3. The image's entrypoint and command, as a container runtime would start them.
PORT=${PORT:-$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')}

ctr=$(b from --quiet "$IMAGE")
server=
cleanup() {
  if [ -n "$server" ]; then kill -TERM "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi
  b rm "$ctr" >/dev/null 2>&1 || true
}
trap cleanup EXIT

# run ENV... -- ARGS: the image's user, the server's port, host networking (chroot isolation).
# `exec` so that a run started in the background is buildah itself, to be stopped by its pid.
run() {
  local env=(--env "FAIRWAY_PORT=$PORT")
  while [ "$1" != -- ]; do env+=(--env "$1"); shift; done
  shift
  exec buildah "${STORE[@]}" run --isolation chroot --user "$user" "${env[@]}" "$ctr" -- "$@"
}

wait_for() {  # wait_for PATH: poll http://127.0.0.1:$PORT/PATH from the host until 200
  local url="http://127.0.0.1:$PORT$1" started=$(now)
  for _ in $(seq 300); do
    if answer=$(python3 -c 'import sys, urllib.request; print(urllib.request.urlopen(sys.argv[1], timeout=1).read().decode())' "$url" 2>/dev/null); then
      echo "GET $1 -> 200 $answer  (after $(seconds "$started" "$(now)") s)"
      return 0
    fi
    if ! kill -0 "$server" 2>/dev/null; then echo "the server exited:"; cat "$WORK/serve.log"; return 1; fi
    sleep 0.2
  done
  echo "no answer from $url"; cat "$WORK/serve.log"; return 1
}

serve() {  # serve ENV...: start entrypoint + default command in the background
  say "buildah run --isolation chroot: ${entrypoint[*]} ${command[*]} (FAIRWAY_PORT=$PORT $*)"
  (run "$@" -- "${entrypoint[@]}" "${command[@]}") >"$WORK/serve.log" 2>&1 &
  server=$!
}

entrypoint_pid() {  # the entrypoint's process: buildah > chroot runtime > chroot exec > it
  ps -o pid= --ppid "$(pgrep -f -P "$(pgrep -P "$server")" buildah-chroot-exec)" | tr -d ' '
}

stop() {
  # SIGTERM to the entrypoint's process, as a container runtime stops a container (buildah
  # itself, sent SIGTERM, would SIGKILL it). The server shuts down, logs `stopped`, and ends
  # by the same signal (uvicorn raises it again after its shutdown), as `docker stop` expects.
  local started=$(now) pid
  pid=$(entrypoint_pid)
  kill -TERM $pid
  wait "$server" || true
  echo "SIGTERM to pid $pid (the entrypoint): gone after $(seconds "$started" "$(now)") s;" \
    "$(grep -o 'subprocess exited on [a-z]*' "$WORK/serve.log" || echo 'exited')"
  server=
  if python3 -c 'import socket, sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 1)' "$PORT" 2>/dev/null; then
    echo "port $PORT still answers after the stop"; exit 1
  fi
  grep '"event": "stopped"' "$WORK/serve.log" || { echo "no clean shutdown logged"; exit 1; }
}

touch "$WORK/started"
serve
wait_for /health
wait_for /ready
# A read-only root filesystem (deploy/k8s) holds only if nothing but the data dir is written:
# buildah mounts the image's VOLUME apart, so the container's own layer must stay unchanged
# (buildah writes /run/.containerenv itself).
mnt=$(b mount "$ctr")
written=$(cd "$mnt" && find . -xdev -newer "$WORK/started" ! -path ./run ! -path ./run/.containerenv)
b umount "$ctr" >/dev/null
echo "files written outside the data volume: ${written:-none}"
[ -z "$written" ]
echo "the process serving, as seen from the host (user, pid, command):"
ps -o user=,pid=,args= -p "$(entrypoint_pid)"
echo "the image's HEALTHCHECK, run inside the container:"
python_code=$(config Healthcheck | python3 -c 'import json, sys; print(json.load(sys.stdin)["Test"][-1])')
(run -- python3 -c "$python_code") && echo "healthcheck exit status 0"
stop

if [ -n "${PROOF_DATABASE_URL:-}" ]; then
  scratch=fairway_image_proof
  say "PostgreSQL: a scratch database $scratch next to $PROOF_DATABASE_URL"
  python3 - "$PROOF_DATABASE_URL" "$scratch" <<'EOF'
import subprocess, sys
url, name = sys.argv[1], sys.argv[2]
for sql in (f"DROP DATABASE IF EXISTS {name} WITH (FORCE)", f"CREATE DATABASE {name}"):
    subprocess.run(["psql", url, "-q", "-c", sql], check=True)
EOF
  database_url=$(python3 -c 'import sys, urllib.parse as u; p = u.urlsplit(sys.argv[1]); print(p._replace(path="/" + sys.argv[2]).geturl())' "$PROOF_DATABASE_URL" "$scratch")
  say "buildah run --isolation chroot: ${entrypoint[*]} migrate"
  (run "DATABASE_URL=$database_url" -- "${entrypoint[@]}" migrate)
  serve "DATABASE_URL=$database_url"
  wait_for /health
  wait_for /ready
  stop
  psql "$PROOF_DATABASE_URL" -q -c "DROP DATABASE $scratch"
fi

say "summary"
echo "build: $built"
echo "image: $(b images --format '{{.Size}}' "$IMAGE") ($IMAGE; base $(b images --format '{{.Size}}' "$BASE_IMAGE"))"
echo "served /health and /ready from the image's entrypoint as user $user"
echo "load average now (a busy machine starts the server slower): $(cut -d' ' -f1-3 /proc/loadavg)"
