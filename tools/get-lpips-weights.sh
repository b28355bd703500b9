#!/bin/sh
# Downloads the two published files LPIPS-alex v0.1 is made of and converts them to clsplat's
# weights file (tools/lpips_weights.py; needs python3, no torch):
#   torchvision's ImageNet AlexNet  https://download.pytorch.org/models/alexnet-owt-7be5be79.pth
#   lpips' v0.1 lin layers          https://github.com/richzhang/PerceptualSimilarity (lpips/weights/v0.1/alex.pth)
# usage: tools/get-lpips-weights.sh [OUT]
#   OUT defaults to $XDG_DATA_HOME/clsplat/lpips/alex_v0.1.f32.bin (~/.local/share/... without
#   XDG_DATA_HOME), where clsplat looks when eval.lpips_weights is not set.
# Offline: copy the two .pth files here by hand and run
#   python3 tools/lpips_weights.py alexnet-owt-7be5be79.pth alex.pth OUT
set -eu
cd "$(dirname "$0")/.."
OUT=${1:-${XDG_DATA_HOME:-$HOME/.local/share}/clsplat/lpips/alex_v0.1.f32.bin}
ALEX_URL=https://download.pytorch.org/models/alexnet-owt-7be5be79.pth
LIN_URL=https://raw.githubusercontent.com/richzhang/PerceptualSimilarity/master/lpips/weights/v0.1/alex.pth
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fetch() {
    if command -v curl >/dev/null 2>&1; then curl -fsSL -o "$2" "$1"
    elif command -v wget >/dev/null 2>&1; then wget -q -O "$2" "$1"
    else echo "get-lpips-weights: needs curl or wget" >&2; exit 1; fi
}
echo "downloading $ALEX_URL"
fetch "$ALEX_URL" "$T/alexnet.pth"
# torchvision names its files by the first 8 hex digits of their sha256
sha256sum "$T/alexnet.pth" | grep -q '^7be5be79' ||
    { echo "get-lpips-weights: $ALEX_URL does not have the sha256 its name promises" >&2; exit 1; }
echo "downloading $LIN_URL"
fetch "$LIN_URL" "$T/alex.pth"
mkdir -p "$(dirname "$OUT")"
python3 tools/lpips_weights.py "$T/alexnet.pth" "$T/alex.pth" "$OUT"
