#!/usr/bin/env bash
# Idempotent: installs the npm package minecraft-assets (Minecraft's textures: never committed) into
# $VISTAWISE_MC_NPM (default .work/npm/), the folder tools/detector/build_dataset.py installs it in too,
# so one install serves both (keep PACKAGE equal to NPM_PACKAGE in tools/detector/data/assets.py).
# tests/minecraft_counts.rs reads the game's font texture, font/ascii.png, from there.
# Safe to run again: it installs only when the package or its version is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

NAME=minecraft-assets
VERSION=1.19.0
prefix=${VISTAWISE_MC_NPM:-.work/npm}
package=$prefix/node_modules/$NAME
data=$package/minecraft-assets/data

ready() {
  [ -f "$data/1.12/font/ascii.png" ] && [ -f "$data/1.19.1/font/ascii.png" ] &&
    grep -q "\"version\": *\"$VERSION\"" "$package/package.json" 2>/dev/null
}
if ! ready; then
  command -v npm >/dev/null || { echo "fetch-minecraft-assets: npm is needed (install Node.js/npm)" >&2; exit 1; }
  echo "fetch-minecraft-assets: installing $NAME@$VERSION into $prefix/"
  mkdir -p "$prefix"
  npm install --prefix "$prefix" --no-audit --no-fund --loglevel=error "$NAME@$VERSION"
  ready || { echo "fetch-minecraft-assets: npm finished but $data has no font/ascii.png of $NAME@$VERSION" >&2; exit 1; }
fi
echo "fetch-minecraft-assets: ready ($data)"
