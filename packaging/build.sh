#!/usr/bin/env bash
# Build the raters' app on Linux: dist/annotator/annotator (PyInstaller, one folder), then a
# .deb around it (dist/annotator_<version>_<arch>.deb) with the .desktop entry, the icon and
# the MIME type that opens .annot rater packages in the app. Prints size and build time.
#
#   pip install -e ".[build]"   # PyInstaller (see packaging/README.md)
#   packaging/build.sh          # add --no-deb to stop after the folder
set -euo pipefail
cd "$(dirname "$0")/.."
START=$(date +%s)
WORK=build/pyinstaller
rm -rf "$WORK/i18n" dist/annotator
packaging/i18n.sh release "$WORK/i18n"          # .qm from the committed .ts (never committed)
python -m PyInstaller --noconfirm --log-level WARN --distpath dist --workpath "$WORK/work" \
  packaging/annotator.spec
BUILT=$(date +%s)
echo "built dist/annotator in $((BUILT - START)) s, $(du -sh dist/annotator | cut -f1)"

[ "${1:-}" = "--no-deb" ] && exit 0
command -v dpkg-deb >/dev/null || { echo "no dpkg-deb here: the folder is built, the .deb is not"; exit 0; }
VERSION=$(python -c "import tomllib; print(tomllib.load(open('pyproject.toml','rb'))['project']['version'])")
ARCH=$(dpkg --print-architecture)
ROOT="$WORK/deb/annotator_${VERSION}_${ARCH}"
rm -rf "$ROOT"
mkdir -p "$ROOT/DEBIAN" "$ROOT/opt" "$ROOT/usr/bin" "$ROOT/usr/share/applications" \
  "$ROOT/usr/share/mime/packages" "$ROOT/usr/share/icons/hicolor/scalable/apps" \
  "$ROOT/usr/share/icons/hicolor/256x256/apps"
cp -a dist/annotator "$ROOT/opt/annotator"
ln -s /opt/annotator/annotator "$ROOT/usr/bin/annotator"
install -m 644 packaging/annotator.desktop "$ROOT/usr/share/applications/annotator.desktop"
install -m 644 packaging/annotator-mime.xml "$ROOT/usr/share/mime/packages/annotator.xml"
install -m 644 packaging/annotator.svg "$ROOT/usr/share/icons/hicolor/scalable/apps/annotator.svg"
install -m 644 packaging/annotator.png "$ROOT/usr/share/icons/hicolor/256x256/apps/annotator.png"
# The system libraries Qt's xcb plugin loads (annotator/ui/app.py XCB_LIBRARIES): a .deb
# installs them with the app, so the first start never fails on a missing one.
DEPENDS=$(python - <<'PY'
import ast, pathlib
src = pathlib.Path("annotator/ui/app.py").read_text()
tree = ast.parse(src)
for node in tree.body:
    if isinstance(node, ast.AnnAssign) and getattr(node.target, "id", "") == "XCB_LIBRARIES":
        pkgs = sorted(set(ast.literal_eval(node.value).values()))
alts = {"libglib2.0-0": "libglib2.0-0t64 | libglib2.0-0"}
print(", ".join(alts.get(p, p) for p in pkgs))
PY
)
SIZE=$(du -sk "$ROOT/opt" | cut -f1)
cat > "$ROOT/DEBIAN/control" <<CONTROL
Package: annotator
Version: $VERSION
Section: graphics
Priority: optional
Architecture: $ARCH
Installed-Size: $SIZE
Depends: $DEPENDS
Maintainer: annotator maintainers <annotator@localhost>
Description: blinded, offline expert rating of generated outputs
 The raters' app: rubric labels and pairwise preferences on model outputs,
 calibration on anchors, rater packages (.annot) that open with a double-click.
CONTROL
cat > "$ROOT/DEBIAN/postinst" <<'POST'
#!/bin/sh
set -e
command -v update-mime-database >/dev/null && update-mime-database /usr/share/mime || true
command -v update-desktop-database >/dev/null && update-desktop-database -q /usr/share/applications || true
command -v gtk-update-icon-cache >/dev/null && gtk-update-icon-cache -q /usr/share/icons/hicolor || true
POST
cp "$ROOT/DEBIAN/postinst" "$ROOT/DEBIAN/postrm"
chmod 755 "$ROOT/DEBIAN/postinst" "$ROOT/DEBIAN/postrm"
dpkg-deb --root-owner-group -Zgzip --build "$ROOT" "dist/annotator_${VERSION}_${ARCH}.deb" >/dev/null
END=$(date +%s)
echo "built dist/annotator_${VERSION}_${ARCH}.deb in $((END - BUILT)) s, $(du -h "dist/annotator_${VERSION}_${ARCH}.deb" | cut -f1)"
