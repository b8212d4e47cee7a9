#!/usr/bin/env bash
# Translations: `packaging/i18n.sh update` re-extracts every UI string into the .ts sources
# (pyside6-lupdate; existing translations are kept, vanished strings marked obsolete);
# `packaging/i18n.sh release [OUT_DIR]` builds the .qm files (pyside6-lrelease) beside the .ts
# or into OUT_DIR. Only the .ts files are committed; the app builds a missing .qm on first use.
set -euo pipefail
cd "$(dirname "$0")/.."
I18N=annotator/ui/translations
LANGS=(es)
case "${1:-update}" in
  update)
    for lang in "${LANGS[@]}"; do
      pyside6-lupdate -no-obsolete -locations none annotator/ui/*.py \
        -source-language en -target-language "$lang" -ts "$I18N/annotator_${lang}.ts"
    done ;;
  release)
    out="${2:-$I18N}"
    mkdir -p "$out"
    for lang in "${LANGS[@]}"; do
      pyside6-lrelease -silent "$I18N/annotator_${lang}.ts" -qm "$out/annotator_${lang}.qm"
    done ;;
  *) echo "usage: $0 update|release [OUT_DIR]" >&2; exit 2 ;;
esac
