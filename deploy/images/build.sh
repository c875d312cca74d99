#!/usr/bin/env bash
# Builds the service images with Docker or Podman, whichever runs here (make images, make base-image).
#
#   deploy/images/build.sh base-image            the base image both stages of every Dockerfile start from
#   deploy/images/build.sh images [service ...]  the service images (all of them without arguments)
#   deploy/images/build.sh sizes                 the built images' sizes as JSON (charts/agentic/image-sizes.json)
#
# Settings (environment):
#   CONTAINER_ENGINE   docker or podman; default: docker when its engine answers, else podman
#   IMAGE_REPOSITORY   images are tagged <IMAGE_REPOSITORY>/<service>:<IMAGE_TAG> (default ghcr.io/agentic, dev)
#   PYTHON_IMAGE       the base image; default: the official python:3.11-slim digest the Dockerfiles name when
#                      it is here or can be pulled, else LOCAL_BASE_IMAGE, made from Debian's packages if missing
#   LOCAL_BASE_IMAGE   name of that local base (default localhost/agentic-python:3.11-bookworm)
#   CONTAINERS_CONF    Podman's settings; default: deploy/images/containers.conf (runc, rlimits it may set)
# pip inside the build uses this machine's package index (PIP_INDEX_URL / PIP_EXTRA_INDEX_URL or pip's own
# configuration, http(s) entries only) and its CA bundle (PIP_CERT or pip's `cert`, passed as a build secret).
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
ALL_SERVICES=(gateway executor state mcp-bridge tool-runner llm-d retrieval)
IMAGE_REPOSITORY="${IMAGE_REPOSITORY:-ghcr.io/agentic}"
IMAGE_TAG="${IMAGE_TAG:-dev}"
LOCAL_BASE_IMAGE="${LOCAL_BASE_IMAGE:-localhost/agentic-python:3.11-bookworm}"
PYTHON="${PYTHON:-python3}"

say() { echo "images: $*" >&2; }
die() { say "$*"; exit 1; }

engine() {
    if [ -n "${CONTAINER_ENGINE:-}" ]; then
        echo "$CONTAINER_ENGINE"
    elif command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1; then
        echo docker
    elif command -v podman >/dev/null 2>&1; then
        echo podman
    else
        die "needs Docker (a running engine) or Podman; on Debian: apt-get install podman buildah runc mmdebstrap"
    fi
}

ENGINE="$(engine)"
if [ "$ENGINE" = podman ]; then
    export CONTAINERS_CONF="${CONTAINERS_CONF:-$ROOT/deploy/images/containers.conf}"
    if grep -q '^runtime = "runc"' "$CONTAINERS_CONF" 2>/dev/null && ! command -v runc >/dev/null 2>&1; then
        die "$CONTAINERS_CONF runs containers with runc, which is missing: apt-get install runc"
    fi
fi

# The base image the Dockerfiles name by default (both stages).
default_base() {
    sed -n 's/^ARG PYTHON_IMAGE=//p' "$ROOT/services/gateway/Dockerfile"
}

image_exists() {
    if [ "$ENGINE" = podman ]; then podman image exists "$1"; else docker image inspect "$1" >/dev/null 2>&1; fi
}

# A Debian bookworm root filesystem with Python 3.11 from Debian's packages, imported as LOCAL_BASE_IMAGE.
make_local_base() {
    command -v mmdebstrap >/dev/null 2>&1 || die "making the base image needs mmdebstrap: apt-get install mmdebstrap"
    local work
    work="$(mktemp -d)"
    # shellcheck disable=SC2064 # expand now: the folder of this call
    trap "rm -rf '$work'" EXIT
    say "making $LOCAL_BASE_IMAGE from Debian bookworm's packages (mmdebstrap)"
    mmdebstrap --quiet --variant=minbase \
        --include=python3,python3-venv,python3-pip,python-is-python3,ca-certificates,passwd \
        --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-exclude=/usr/share/man/*' \
        --dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-exclude=/usr/share/info/*' \
        --customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/*' \
        bookworm "$work/rootfs.tar"
    "$ENGINE" import --change 'ENV=LANG=C.UTF-8' --change 'CMD=["python3"]' \
        "$work/rootfs.tar" "$LOCAL_BASE_IMAGE" >/dev/null
    rm -rf "$work"
    trap - EXIT
}

# Prints the base image to build from, making the local one when no other is to be had.
base_image() {
    if [ -n "${PYTHON_IMAGE:-}" ]; then
        echo "$PYTHON_IMAGE"
        return
    fi
    local official
    official="$(default_base)"
    if image_exists "$official"; then
        echo "$official"
    elif image_exists "$LOCAL_BASE_IMAGE"; then
        echo "$LOCAL_BASE_IMAGE"
    elif "$ENGINE" pull --quiet "$official" >/dev/null 2>&1; then
        echo "$official"
    else
        say "$official cannot be pulled (no registry reachable?)"
        make_local_base
        echo "$LOCAL_BASE_IMAGE"
    fi
}

# `pip config get` of one key, empty when unset.
pip_config() {
    "$PYTHON" -m pip config get "$1" 2>/dev/null || true
}

# The http(s) entries of a space-separated list of index URLs (file:// ones name this machine's disk).
web_urls() {
    local url out=()
    for url in $1; do
        case "$url" in http://* | https://*) out+=("$url") ;; esac
    done
    echo "${out[*]:-}"
}

build_images() {
    local base services index extra cert secret revision service
    services=("$@")
    [ ${#services[@]} -gt 0 ] || services=("${ALL_SERVICES[@]}")
    base="$(base_image)"
    index="$(web_urls "${PIP_INDEX_URL:-$(pip_config global.index-url)}")"
    extra="$(web_urls "${PIP_EXTRA_INDEX_URL:-$(pip_config global.extra-index-url)}")"
    cert="${PIP_CERT:-$(pip_config global.cert)}"
    secret="$(mktemp)"
    # shellcheck disable=SC2064 # expand now: the file of this call
    trap "rm -f '$secret'" EXIT
    if [ -n "$cert" ] && [ -r "$cert" ]; then cat "$cert" > "$secret"; fi
    revision="$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)"
    local args=(--network host --secret "id=pip-ca,src=$secret" --build-arg "PYTHON_IMAGE=$base"
        --build-arg "REVISION=$revision")
    [ -z "$index" ] || args+=(--build-arg "PIP_INDEX_URL=$index")
    [ -z "$extra" ] || args+=(--build-arg "PIP_EXTRA_INDEX_URL=$extra")
    say "building ${services[*]} with $ENGINE from $base"
    for service in "${services[@]}"; do
        [ -f "$ROOT/services/$service/Dockerfile" ] || die "no such service: $service"
        local tag="$IMAGE_REPOSITORY/$service:$IMAGE_TAG" previous=""
        previous="$("$ENGINE" image inspect --format '{{.Id}}' "$tag" 2>/dev/null || true)"
        say "$tag"
        "$ENGINE" build "${args[@]}" -f "$ROOT/services/$service/Dockerfile" -t "$tag" "$ROOT"
        # The image this tag named before, now nameless, goes (unless a container or another tag holds it).
        if [ -n "$previous" ] && [ "$previous" != "$("$ENGINE" image inspect --format '{{.Id}}' "$tag")" ]; then
            "$ENGINE" rmi "$previous" >/dev/null 2>&1 || true
        fi
    done
}

# The sizes of the images built (bytes, uncompressed) and of their base, for the chart README.
print_sizes() {
    local base service size first=1
    base="$(base_image)"
    printf '{\n  "engine": "%s",\n  "base": "%s",\n  "base_bytes": %s,\n  "images": {' "$ENGINE" "$base" \
        "$("$ENGINE" image inspect --format '{{.Size}}' "$base")"
    for service in "${ALL_SERVICES[@]}"; do
        size="$("$ENGINE" image inspect --format '{{.Size}}' "$IMAGE_REPOSITORY/$service:$IMAGE_TAG")"
        [ "$first" = 1 ] || printf ','
        first=0
        printf '\n    "%s": %s' "$service" "$size"
    done
    printf '\n  }\n}\n'
}

case "${1:-}" in
    base-image)
        say "base image: $(base_image)"
        ;;
    images)
        shift
        build_images "$@"
        ;;
    sizes)
        print_sizes
        ;;
    *)
        die "usage: $0 base-image | images [service ...] | sizes"
        ;;
esac
