#!/bin/sh
# Installs clsplat's Debian build and run dependencies when missing (as root), or names them.
#   usage: tools/install-deps.sh [EXTRA...]   (extra groups: clang, for make fuzz; oclgrind, for make check-oclgrind;
#   interop, for make check-interop; rusticl, for make check-rusticl; colmap, for make check-convert;
#   valgrind, for make check-valgrind)
PKGS="build-essential pkg-config ocl-icd-opencl-dev opencl-headers clinfo libpng-dev libjansson-dev libjpeg-dev libexif-dev zlib1g-dev pocl-opencl-icd python3-protobuf protobuf-compiler python3-crc32c libmeshoptimizer-dev assimp-utils libmicrohttpd-dev"
for extra in "$@"; do
    case $extra in
    clang) PKGS="clang" ;; # libFuzzer and the sanitizers' runtimes come with it
    oclgrind) PKGS="oclgrind" ;; # make check-oclgrind
    interop) PKGS="nodejs chromium" ;; # make check-interop (npm: with nodejs, or its own package)
    rusticl) PKGS="mesa-opencl-icd" ;; # make check-rusticl (Mesa's rusticl, llvmpipe device)
    colmap) PKGS="colmap" ;; # make check-convert (tools/convert.sh)
    valgrind) PKGS="valgrind" ;; # make check-valgrind
    *) echo "install-deps: unknown group $extra" >&2; exit 2 ;;
    esac
done
missing=""
for p in $PKGS; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" = 0 ]; then
    echo "installing:$missing"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq && apt-get install -y -qq --no-install-recommends $missing >/dev/null || {
        echo "apt-get install failed for:$missing" >&2; exit 1; }
else
    echo "missing Debian packages:$missing" >&2
    echo "install them with: sudo apt-get install$missing" >&2
    exit 1
fi
