#!/usr/bin/env bash
# The base build pack-pair.sh packed (base.tar.xz, beside this script) made runnable in DIR: the same
# project with its own dist/ and bin/, on this one's node_modules. Run from the unpacked project.
set -euo pipefail
dir=${1:?usage: base.sh DIR}
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$dir" && mkdir -p "$dir"
cp -r materials shaders examples package.json "$dir/"
ln -s "$PWD/node_modules" "$dir/node_modules"
tar -C "$dir" -xJf "$here/base.tar.xz"
