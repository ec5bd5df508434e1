#!/usr/bin/env bash
# Makes sure this machine can build warpjit, installing only what is missing:
#   - a Rust toolchain of at least MIN_RUST (checked; never installed here:
#     Debian's own cargo is too old, rustup is the way to get a current one);
#   - LLVM 19 development packages (installed with apt-get when missing).
# Safe to run any number of times. Run it directly, or source it and call
# ensure_prerequisites (dev.sh does that, so a PATH fix-up reaches cargo).

MIN_RUST="1.88"
LLVM_PACKAGES=(llvm-19-dev libpolly-19-dev libzstd-dev zlib1g-dev)

say() { printf 'setup: %s\n' "$*" >&2; }

# True when version $1 >= version $2 (dotted numbers).
version_at_least() {
    [ "$(printf '%s\n%s\n' "$2" "$1" | sort -V | head -n1)" = "$2" ]
}

ensure_rust() {
    # rustup installs into ~/.cargo/bin; a new shell may not have it on PATH yet.
    if ! command -v cargo >/dev/null 2>&1 && [ -x "$HOME/.cargo/bin/cargo" ]; then
        export PATH="$HOME/.cargo/bin:$PATH"
    fi
    if ! command -v cargo >/dev/null 2>&1 || ! command -v rustc >/dev/null 2>&1; then
        say "no Rust toolchain found (cargo is not on PATH)."
        say "Install rustup (see https://rustup.rs), which installs a current stable"
        say "Rust into ~/.cargo/bin; then open a new shell and run this command again."
        say "(Debian's own cargo package is too old for warpjit: it needs Rust >= $MIN_RUST.)"
        return 1
    fi
    local found
    found="$(rustc --version | awk '{print $2}')"
    if ! version_at_least "${found%%-*}" "$MIN_RUST"; then
        say "rustc $found at $(command -v rustc) is too old; warpjit needs Rust >= $MIN_RUST."
        say "Debian's packaged Rust is too old: install rustup (see https://rustup.rs),"
        say "or run 'rustup update stable' if you already use it, then run this again."
        return 1
    fi
    say "rust $found: ok"
}

package_installed() {
    dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'
}

ensure_llvm() {
    if ! command -v dpkg-query >/dev/null 2>&1; then
        say "not a Debian-based system: make sure LLVM 19 (with its development files)"
        say "is installed; .cargo/config.toml expects it under /usr/lib/llvm-19."
        return 0
    fi
    local missing=() package
    for package in "${LLVM_PACKAGES[@]}"; do
        package_installed "$package" || missing+=("$package")
    done
    if [ "${#missing[@]}" -eq 0 ]; then
        say "llvm 19 packages: ok"
        return 0
    fi
    local sudo=()
    if [ "$(id -u)" -ne 0 ]; then
        if ! command -v sudo >/dev/null 2>&1; then
            say "missing packages: ${missing[*]}"
            say "installing them needs root; run as root: apt-get update && apt-get install ${missing[*]}"
            return 1
        fi
        sudo=(sudo)
    fi
    say "installing ${missing[*]}"
    "${sudo[@]}" apt-get update || { say "apt-get update failed"; return 1; }
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
        apt-get install -y --no-install-recommends "${missing[@]}" \
        || { say "apt-get install ${missing[*]} failed"; return 1; }
}

ensure_prerequisites() {
    ensure_rust && ensure_llvm
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    set -uo pipefail
    ensure_prerequisites
fi
