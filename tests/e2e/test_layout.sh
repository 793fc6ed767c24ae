# shellcheck shell=bash
# The source tree's folders follow the data flow (src/README.md), and the
# includes go one way: app/ and serve/ above export/ and tui/, above
# engine/, above backend/ and system/, above core/. A grep over every
# #include "..." line under src/ (system headers, <...>, are not ours):
# - core/ includes only core/;
# - backend/ and system/ include neither engine/ nor anything above it;
# - engine/ includes none of tui/, export/, serve/, app/;
# - export/ and tui/ include neither serve/ nor app/.

# layout_violations SRC-DIR: one line "FILE: HEADER" for each include that
# climbs against the flow; nothing when there is none.
layout_violations() {
    local root=$1 f dir inc
    while IFS= read -r f; do
        dir=${f#"$root"/}
        dir=${dir%%/*}
        while IFS= read -r inc; do
            case "$dir:$inc" in
            core:core/*) ;;
            core:*) echo "${f#"$root"/}: $inc" ;;
            backend:engine/* | backend:export/* | backend:tui/* | backend:serve/* | backend:app/* | \
                system:engine/* | system:export/* | system:tui/* | system:serve/* | system:app/*)
                echo "${f#"$root"/}: $inc" ;;
            engine:tui/* | engine:export/* | engine:serve/* | engine:app/*) echo "${f#"$root"/}: $inc" ;;
            export:serve/* | export:app/* | tui:serve/* | tui:app/*) echo "${f#"$root"/}: $inc" ;;
            esac
        done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f")
    done < <(find "$root" -name '*.[ch]' | sort)
}

SRCDIR="$MIGMON_SRC/src"
# The folders are there, with their files and their README.
for d in core engine backend backend/nvml backend/gpm backend/dcgm backend/events backend/amdgpu \
    backend/prometheus backend/replay system export serve tui app; do
    [ -f "$SRCDIR/$d/README.md" ] && ok || bad "src/$d/README.md is missing"
    n=$(find "$SRCDIR/$d" -maxdepth 1 -name '*.[ch]' | wc -l)
    [ "$n" -ge 2 ] && ok || bad "src/$d holds $n C files"
done
# Nothing loose in src/ but main.c and the README.
eq "loose files in src/" "$(find "$SRCDIR" -maxdepth 1 -type f -printf '%f\n' | sort | tr '\n' ' ')" \
    "README.md main.c "
# Headers are named from src/ (-Isrc): "core/model.h", never "model.h".
eq "includes without their folder" \
    "$(grep -rn '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[^/"]*"' "$SRCDIR" --include='*.[ch]' |
        grep -v '"version.h"' | grep -v '"migmon.h"' | wc -l)" 0

v=$(layout_violations "$SRCDIR")
eq "includes against the flow" "$v" ""
eq "includes against the flow, counted" "$(printf '%s' "$v" | grep -c .)" 0
# The grep reads real includes: core's files do include core's headers.
n=$(grep -rh '^#include "core/' "$SRCDIR/core" | wc -l)
[ "$n" -ge 10 ] && ok || bad "only $n core/ includes seen under src/core"

# The check catches what it is for: on a copy of the tree, one planted
# include per rule is reported, and only those.
cp -r "$SRCDIR" "$TMP/layout-src"
printf '#include "system/host.h"\n' >>"$TMP/layout-src/core/units.c"
printf '#include "tui/view.h"\n' >>"$TMP/layout-src/engine/proclist.c"
printf '#include "engine/health.h"\n' >>"$TMP/layout-src/backend/nvml/nvml_read.c"
printf '#include "export/json.h"\n' >>"$TMP/layout-src/system/cpu.c"
printf '  #  include "app/cli.h" /* spaced */\n' >>"$TMP/layout-src/tui/view.h"
printf '#include <stdio.h>\n#include "core/text.h"\n' >>"$TMP/layout-src/engine/engine.c"
eq "planted violations" "$(layout_violations "$TMP/layout-src")" \
    "backend/nvml/nvml_read.c: engine/health.h
core/units.c: system/host.h
engine/proclist.c: tui/view.h
system/cpu.c: export/json.h
tui/view.h: app/cli.h"
rm -rf "$TMP/layout-src"
