#!/usr/bin/env bash
# Fetch the JavaScript/CSS that asv's published pages load from CDNs and copy
# the files jaxbench serves instead into src/jaxbench/assets/vendor/.
#
# asv 0.6.6's www/index.html loads jquery 3.3.1, flot 0.8.3 (+ time, selection,
# categories), flot-orderbars 1.0.0, stupidtable 1.0.1, blueimp-md5 2.19.0 and
# bootstrap 3.1.1 (js + css) from code.jquery.com, cdnjs and jsdelivr. The
# same versions come from the npm registry (stupidtable is published there as
# stupid-table-plugin, whose oldest served version is 1.1.3); `npm pack`
# checks each tarball against the registry's integrity hash.
#
# Usage: scripts/vendor-assets.sh   (from anywhere; needs npm and the npm registry)
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dest="$repo_root/src/jaxbench/assets/vendor"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

fetch() {  # fetch NPM_SPEC DIR: unpack the npm tarball of NPM_SPEC into $work/DIR
    local spec="$1" dir="$2" tarball
    tarball="$(cd "$work" && npm pack --silent "$spec" | tail -n 1)"
    mkdir -p "$work/$dir"
    tar -xzf "$work/$tarball" -C "$work/$dir" --strip-components=1
}

fetch jquery@3.3.1 jquery
fetch flot@0.8.3 flot
fetch flot-orderbars@1.0.0 flot-orderbars
fetch stupid-table-plugin@1.1.3 stupidtable
fetch blueimp-md5@2.19.0 blueimp-md5
fetch bootstrap@3.1.1 bootstrap

rm -rf "$dest"
mkdir -p "$dest"/{jquery-3.3.1,flot-0.8.3,flot-orderbars-1.0.0,stupidtable-1.1.3,blueimp-md5-2.19.0,bootstrap-3.1.1}

cp "$work/jquery/dist/jquery.min.js" "$work/jquery/LICENSE.txt" "$dest/jquery-3.3.1/"
# The flot npm package ships no minified files (cdnjs minifies them itself):
# serve the sources, which are what cdnjs's .min.js files are made from.
cp "$work/flot/"jquery.flot{,.time,.selection,.categories}.js "$work/flot/LICENSE.txt" \
   "$dest/flot-0.8.3/"
# flot-orderbars has no LICENSE file: its licence (MIT) is stated in the file
# header and in package.json, which is kept as the record.
cp "$work/flot-orderbars/js/jquery.flot.orderBars.js" "$work/flot-orderbars/package.json" \
   "$dest/flot-orderbars-1.0.0/"
cp "$work/stupidtable/stupidtable.min.js" "$work/stupidtable/LICENSE" "$dest/stupidtable-1.1.3/"
cp "$work/blueimp-md5/js/md5.min.js" "$work/blueimp-md5/LICENSE.txt" "$dest/blueimp-md5-2.19.0/"
cp "$work/bootstrap/dist/js/bootstrap.min.js" "$work/bootstrap/dist/css/bootstrap.min.css" \
   "$work/bootstrap/LICENSE" "$dest/bootstrap-3.1.1/"

(cd "$dest" && find . -type f | LC_ALL=C sort | xargs sha256sum)
