#!/usr/bin/env bash
# Check the built app as a rater gets it: build dist/annotator (unless --no-build), run the
# BUILT executable's --selftest, build the demo study with it, start it under Xvfb (a real X
# server, not Qt's offscreen plugin) on the demo study, grab the label view to
# build/bundle-check/label_view.png, and time the cold start of the bundle against
# `python -m annotator` on the same study. One line per step; exit 1 on any failure.
#
#   packaging/check_bundle.sh [--no-build]        (CI: after `pip install -e ".[build]"`)
# Needs: xvfb (Xvfb), imagemagick (import), and the xcb libraries of README "Installing the app".
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=build/bundle-check
APP=dist/annotator/annotator
rm -rf "$OUT" && mkdir -p "$OUT"
fail() { echo "bundle check: FAIL $*"; exit 1; }

if [ "${1:-}" != "--no-build" ]; then
  packaging/build.sh --no-deb | tail -1
fi
[ -x "$APP" ] || fail "no $APP: build it first"
echo "bundle check: size $(du -sh dist/annotator | cut -f1)"

ANNOTATOR_SELFTEST_OUT="$OUT" "$APP" --selftest | tee "$OUT/selftest.txt" || fail "the built app's self-test"

export ANNOTATOR_SETTINGS="$OUT/settings/annotator.ini" XDG_DATA_HOME="$OUT/data"
"$APP" demo --headless --study "$OUT/demo" >/dev/null 2>&1 || fail "the built app could not build the demo study"

XVFB_PID=""
if [ -z "${DISPLAY:-}" ]; then
  command -v Xvfb >/dev/null || fail "no Xvfb (apt-get install xvfb)"
  export DISPLAY=:$((90 + RANDOM % 9))
  Xvfb "$DISPLAY" -screen 0 1400x900x24 >/dev/null 2>&1 &
  XVFB_PID=$!
  sleep 2
fi
APP_PID=""
cleanup() { [ -n "$APP_PID" ] && kill "$APP_PID" 2>/dev/null; [ -n "$XVFB_PID" ] && kill "$XVFB_PID" 2>/dev/null; true; }
trap cleanup EXIT

# Cold start: process start to the first view ready (ANNOTATOR_QUIT_WHEN_READY), 3 runs each.
for who in bundle python; do
  for i in 1 2 3; do
    start=$(date +%s.%N)
    if [ "$who" = bundle ]; then
      ANNOTATOR_QUIT_WHEN_READY=1 "$APP" gui --study "$OUT/demo" --rater demo-rater >/dev/null 2>&1 \
        || fail "the built app did not start under X"
    else
      ANNOTATOR_QUIT_WHEN_READY=1 python -m annotator gui --study "$OUT/demo" --rater demo-rater >/dev/null 2>&1 \
        || fail "python -m annotator did not start under X"
    fi
    end=$(date +%s.%N)
    printf '%s %.2f\n' "$who" "$(echo "$end - $start" | bc)" >> "$OUT/cold_start.txt"
  done
done
awk '{s[$1]+=$2; n[$1]++} END {printf "bundle check: cold start to the label view (mean of 3): bundle %.2f s, python -m annotator %.2f s\n", s["bundle"]/n["bundle"], s["python"]/n["python"]}' "$OUT/cold_start.txt"

# The label view in a real X window, grabbed from the screen.
"$APP" gui --study "$OUT/demo" --rater demo-rater >"$OUT/app.log" 2>&1 &
APP_PID=$!
sleep 6
kill -0 "$APP_PID" 2>/dev/null || fail "the built app exited: $(tail -1 "$OUT/app.log")"
import -window root "$OUT/label_view.png" || fail "could not grab the screen (imagemagick's import)"
colours=$(convert "$OUT/label_view.png" -format %k info:)
[ "$colours" -gt 50 ] || fail "the grabbed screen is blank ($colours colours)"
echo "bundle check: ok, the label view is in $OUT/label_view.png ($colours colours)"
