#!/bin/sh
# Render the app icon (resources/icon/recall-gui.svg) as PNGs at the sizes desktops look for, in the
# hicolor theme's layout: packaging/icons/hicolor/<N>x<N>/apps/recall-gui.png. The PNGs are committed;
# run this again after changing the SVG. Needs rsvg-convert (Debian/Ubuntu: apt-get install librsvg2-bin).
set -eu
cd "$(dirname "$0")/../.."
svg=resources/icon/recall-gui.svg
for size in 16 22 24 32 48 64 128 256 512; do
    out=packaging/icons/hicolor/${size}x${size}/apps/recall-gui.png
    mkdir -p "$(dirname "$out")"
    rsvg-convert --width "$size" --height "$size" --keep-aspect-ratio --output "$out" "$svg"
done
# The window loads the same art from the package (recall_gui/qt/assets/): keep the two copies equal.
cmp -s "$svg" recall_gui/qt/assets/recall-gui.svg || cp "$svg" recall_gui/qt/assets/recall-gui.svg
