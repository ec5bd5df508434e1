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
        # cargo prints one summary per test binary, the last often an empty
        # doc-test run; close with the total over all of them instead.
        log=$(mktemp)
        trap 'rm -f "$log"' EXIT
        status=0
        cargo test --workspace 2>&1 | tee "$log" || status=$?
        awk '/^test result:/ { passed += $4; failed += $6 }
             END { printf "%d passed, %d failed\n", passed, failed }' "$log"
        exit "$status"
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
