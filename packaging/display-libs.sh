#!/bin/sh
# The system libraries Qt's display plugin loads (packaging/apt-packages.txt, one Debian / Ubuntu
# package a line, held to annotator/ui/app.py XCB_LIBRARIES by tests/unit/test_docs.py): installs
# the missing ones with apt-get. Elsewhere it does nothing, and annotator names what is missing
# in one line before it builds or opens anything.
set -e
command -v apt-get >/dev/null 2>&1 || exit 0
command -v dpkg-query >/dev/null 2>&1 || exit 0
list="$(dirname "$0")/apt-packages.txt"
missing=""
for p in $(cat "$list"); do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "installing the display libraries Qt needs:$missing"
as_root=""
[ "$(id -u)" -eq 0 ] || as_root="sudo"
# a fresh machine may have no package lists yet
$as_root apt-get install -y -qq $missing || { $as_root apt-get update -qq && $as_root apt-get install -y -qq $missing; }
