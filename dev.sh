#!/usr/bin/env bash
# warpjit developer commands. Each one first installs what is missing
# (scripts/setup.sh), then builds and runs.
#
#   ./dev.sh demo    render the Mandelbrot example to out/mandelbrot.pgm
#   ./dev.sh test    run the whole test suite (cargo test --workspace)
#   ./dev.sh setup   only check and install the prerequisites
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
# shellcheck source=scripts/setup.sh
source scripts/setup.sh

usage() {
    sed -n '2,7s/^# \{0,1\}//p' "$0"
}

case "${1:-}" in
    demo)
        ensure_prerequisites
        cargo build --release --bin warpjit
        echo
        echo "\$ warpjit run examples/mandelbrot.warp"
        cargo run --release --quiet --bin warpjit -- run examples/mandelbrot.warp
        echo
        echo "Open out/mandelbrot.pgm in an image viewer (PGM is a plain grey-map format)."
        ;;
    test)
        ensure_prerequisites
        # Nothing may print after cargo: its summary lines end the output.
        exec cargo test --workspace
        ;;
    setup)
        ensure_prerequisites
        ;;
    -h | --help | help)
        usage
        ;;
    *)
        usage >&2
        exit 2
        ;;
esac
