#!/bin/sh
# Install this recall-gui build as a desktop app for the current user (no root needed), or remove it.
#
#   ./install.sh                 # into ~/.local: the program, `recall-gui` on PATH, menu entry, icons
#   ./install.sh --prefix DIR    # elsewhere, e.g. --prefix /usr/local (as root) for every user
#   ./install.sh --uninstall     # remove what the same command installed (add --prefix if you used one)
#
# Run it from the unpacked build folder (dist/recall-gui/, beside the `recall-gui` program). It writes:
#   PREFIX/lib/recall-gui/                      the program folder (replaced on reinstall)
#   PREFIX/bin/recall-gui                       a link to the program
#   PREFIX/share/applications/recall-gui.desktop
#   PREFIX/share/icons/hicolor/*/apps/recall-gui.{png,svg}
#   PREFIX/share/metainfo/io.github.recall_gui.recall_gui.metainfo.xml
# Your knowledge bases, settings and the demo are elsewhere and are never touched (see the README).
set -eu

prefix="$HOME/.local"
action=install
while [ $# -gt 0 ]; do
    case "$1" in
        --prefix) prefix="${2:?--prefix needs a directory}"; shift 2 ;;
        --prefix=*) prefix="${1#--prefix=}"; shift ;;
        --uninstall) action=uninstall; shift ;;
        -h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "install.sh: unknown argument: $1 (see --help)" >&2; exit 2 ;;
    esac
done

here="$(cd "$(dirname "$0")" && pwd -P)"
app="$prefix/lib/recall-gui"
share="$prefix/share"
desktop="$share/applications/recall-gui.desktop"
metainfo="$share/metainfo/io.github.recall_gui.recall_gui.metainfo.xml"

refresh_caches() {
    # Menus and icon themes pick up new files by themselves on most desktops; these make it immediate.
    if command -v update-desktop-database >/dev/null 2>&1; then
        update-desktop-database -q "$share/applications" 2>/dev/null || true
    fi
    if command -v gtk-update-icon-cache >/dev/null 2>&1 && [ -f "$share/icons/hicolor/index.theme" ]; then
        gtk-update-icon-cache -q -t "$share/icons/hicolor" 2>/dev/null || true
    fi
}

if [ "$action" = uninstall ]; then
    rm -f "$desktop" "$metainfo"
    rm -f "$share"/icons/hicolor/*/apps/recall-gui.png "$share"/icons/hicolor/*/apps/recall-gui.svg
    if [ -L "$prefix/bin/recall-gui" ]; then rm -f "$prefix/bin/recall-gui"; fi
    rm -rf "$app"
    refresh_caches
    echo "recall-gui removed from $prefix"
    exit 0
fi

if [ ! -x "$here/recall-gui" ] || [ ! -d "$here/_internal" ] || [ ! -d "$here/share" ]; then
    echo "install.sh: run me from the built recall-gui folder (it holds recall-gui, _internal/ and share/)" >&2
    exit 1
fi

case "$app" in
    *[\"\`\$\\\|\&%]*)
        echo "install.sh: a menu entry cannot run a program under $app; choose another --prefix" >&2
        exit 1 ;;
esac

# The program folder: copied aside first, then swapped in, so a failed copy leaves the old one working.
mkdir -p "$prefix/lib" "$prefix/bin"
if [ "$here" != "$(cd "$app" 2>/dev/null && pwd -P || true)" ]; then
    rm -rf "$app.new"
    cp -R "$here" "$app.new"
    rm -rf "$app"
    mv "$app.new" "$app"
fi
ln -sfn "$app/recall-gui" "$prefix/bin/recall-gui"

# The menu entry runs the program by its full path: a desktop session's PATH often lacks ~/.local/bin.
mkdir -p "$share/applications" "$share/metainfo"
sed "s|^Exec=.*|Exec=\"$app/recall-gui\"|" "$here/share/applications/recall-gui.desktop" > "$desktop.tmp"
mv "$desktop.tmp" "$desktop"
cp "$here/share/metainfo/io.github.recall_gui.recall_gui.metainfo.xml" "$metainfo"
for icon in "$here"/share/icons/hicolor/*/apps/recall-gui.*; do
    size_dir="$(basename "$(dirname "$(dirname "$icon")")")"
    mkdir -p "$share/icons/hicolor/$size_dir/apps"
    cp "$icon" "$share/icons/hicolor/$size_dir/apps/"
done
refresh_caches

echo "recall-gui installed in $app"
echo "  menu entry: $desktop"
case ":$PATH:" in
    *":$prefix/bin:"*) echo "  command:    recall-gui" ;;
    *) echo "  command:    $prefix/bin/recall-gui ($prefix/bin is not on your PATH)" ;;
esac
