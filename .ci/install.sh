#!/usr/bin/env bash
# Installs what splatsort's tests need on a Debian 12 machine without a GPU: lavapipe (Mesa's CPU Vulkan driver)
# from bookworm-backports (Mesa 25; Debian's own Mesa 22 silently cuts every shader loop at 65,535 iterations), Xvfb
# for the windowed smoke test, and ffmpeg's ffprobe, which reads the MP4s of `render --path` back. Does nothing when
# they are already there. Needs root (or sudo).
set -euo pipefail

need_mesa() {
    local version
    version=$(dpkg-query -W -f='${Version}' mesa-vulkan-drivers 2>/dev/null || true)
    [ -z "$version" ] && return 0
    dpkg --compare-versions "$version" lt 25 && return 0
    return 1
}
need_xvfb() { ! command -v xvfb-run >/dev/null 2>&1; }
need_ffprobe() { ! command -v ffprobe >/dev/null 2>&1; }

if ! need_mesa && ! need_xvfb && ! need_ffprobe; then
    exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "install: not a Debian system; install a Vulkan driver (Mesa >= 25 lavapipe or a GPU driver), Xvfb and ffmpeg yourself" >&2
    exit 1
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
        echo "install: needs root to install mesa-vulkan-drivers, xvfb and ffmpeg" >&2; exit 1
    fi
fi
export DEBIAN_FRONTEND=noninteractive
if need_mesa; then
    sources=/etc/apt/sources.list.d/debian.sources
    if [ -f "$sources" ] && ! grep -q 'bookworm-backports' "$sources"; then
        $SUDO sed -i 's/^Suites: bookworm bookworm-updates$/Suites: bookworm bookworm-updates bookworm-backports/' "$sources"
    fi
    if ! grep -rqs 'bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/; then
        echo 'deb http://deb.debian.org/debian bookworm-backports main' | $SUDO tee /etc/apt/sources.list.d/backports.list >/dev/null
    fi
    $SUDO apt-get update -q >/dev/null
    $SUDO apt-get install -y -q -t bookworm-backports mesa-vulkan-drivers >/dev/null
fi
if need_xvfb; then
    [ -n "$(find /var/lib/apt/lists -maxdepth 1 -name '*Packages*' -print -quit 2>/dev/null)" ] || $SUDO apt-get update -q >/dev/null
    $SUDO apt-get install -y -q xvfb xauth >/dev/null
fi
if need_ffprobe; then
    [ -n "$(find /var/lib/apt/lists -maxdepth 1 -name '*Packages*' -print -quit 2>/dev/null)" ] || $SUDO apt-get update -q >/dev/null
    $SUDO apt-get install -y -q --no-install-recommends ffmpeg >/dev/null
fi
echo "install: mesa-vulkan-drivers $(dpkg-query -W -f='${Version}' mesa-vulkan-drivers), xvfb and ffmpeg installed"
