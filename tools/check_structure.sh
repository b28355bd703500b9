#!/bin/sh
# check_structure: the rules of the source layout that a reviewer would otherwise check by
# eye (README "Where things go"). src/ holds one folder per feature, in the order below (the
# layer table: a folder may use the folders before it, never one after it). Fails, naming the
# file, when
#   - a source is not in one of these folders, or a src/*/*.c but main.c has no header beside it;
#   - a module includes a module of a later folder, or the module include graph has a circle
#     (module = src/F/X.c with its header src/F/X.h);
#   - a function in src/ is longer than MAX_LINES (about 100, STYLE.md).
#   - with OBJ (a folder of the build's objects, one X.o a module), the same for the call
#     graph: a module that calls a function of a later folder, or a circle of modules calling
#     each other.
# usage: tools/check_structure.sh [ROOT [OBJ]]   (run by `make check-structure` and `make test`)
set -eu
ROOT=${1:-.}
OBJ=${2:-}
MAX_LINES=100
cd "$ROOT"
FOLDERS='base runtime io data model stages eval report serve train mesh batch blocks cli'
# "index folder module..." a row per folder; cl/layout.h and the generated kernel sources are base,
# cl/contract.h and cl/mesh_tex.h (the mesh volume's contraction and the mesh texture, shared with
# the kernels) are mesh, the generated web
# sources (src/serve/web/) serve
LAYERS=$(i=0; for f in $FOLDERS; do
    mods=$(for x in src/$f/*.c src/$f/*.h; do [ -f "$x" ] && basename "$x" | sed 's/\.[ch]$//'; done | sort -u | tr '\n' ' ')
    [ $f = base ] && mods="$mods layout cl_sources"
    [ $f = serve ] && mods="$mods web_sources"
    [ $f = mesh ] && mods="$mods contract mesh_tex"
    echo "$i $f $mods"; i=$((i + 1))
done)
status=0
for x in src/* src/*/*; do
    case $x in *.c|*.h) ;; *) continue ;; esac
    f=$(basename "$(dirname "$x")")
    case " $FOLDERS " in *" $f "*) ;; *) echo "check_structure: $x is not in a feature folder ($FOLDERS)"; status=1 ;; esac
done
files=$(for f in src/*/*.c src/*/*.h cl/layout.h; do if [ -f "$f" ]; then echo "$f"; fi; done)
# sources whose entry points a shared private header declares (module:header)
SHARED_HEADERS='scene_colmap:readers scene_blender:readers'
# every .c but main has a header beside it
for c in src/*/*.c; do
    [ -f "$c" ] || continue
    m=$(basename "$c" .c)
    [ "$m" = main ] && continue
    h=$m
    for pair in $SHARED_HEADERS; do [ "${pair%%:*}" = "$m" ] && h=${pair#*:}; done
    [ -f "$(dirname "$c")/$h.h" ] || { echo "check_structure: $c has no header ($(dirname "$c")/$h.h)"; status=1; }
done
# edges "from to file" between project modules
edges=$(for f in $files; do
    m=$(basename "$f"); m=${m%.*}
    sed -n 's/^#include "\([^"]*\)\.h".*/\1/p' "$f" | while read -r to; do
        [ "$to" = "$m" ] || echo "$m $to $f"
    done
done)
check_graph() { # KIND: reads "from to where" lines
    awk -v layers="$LAYERS" -v kind="$1" '
BEGIN {
    n = split(layers, rows, "\n")
    for (i = 1; i <= n; i++) {
        k = split(rows[i], w, " ")
        for (j = 3; j <= k; j++) { layer[w[j]] = w[1]; lname[w[1]] = w[2] }
    }
    bad = 0
}
NF == 3 {
    from = $1; to = $2; file = $3
    if (!(from in layer)) { printf "check_structure: module %s (%s) is not in a feature folder\n", from, file; bad = 1; next }
    if (!(to in layer)) { printf "check_structure: module %s (included by %s) is not in a feature folder\n", to, file; bad = 1; next }
    if (layer[to] > layer[from]) {
        printf "check_structure: %s: %s %s: %s (%s) is above %s (%s)\n", file, kind, to, to, lname[layer[to]], from, lname[layer[from]]
        bad = 1
    }
    if (!((from, to) in seen)) { seen[from, to] = 1; adj[from] = adj[from] " " to }
    nodes[from] = 1; nodes[to] = 1
}
function visit(u,    parts, k, v, i) {
    state[u] = 1; stack[++depth] = u
    k = split(adj[u], parts, " ")
    for (i = 1; i <= k; i++) {
        v = parts[i]
        if (state[v] == 1) {
            for (j = depth; j >= 1 && stack[j] != v; j--) ;
            cyc = stack[j]; for (j++; j <= depth; j++) cyc = cyc " -> " stack[j]
            printf "check_structure: %s circle: %s -> %s\n", kind, cyc, v; bad = 1
        } else if (state[v] == 0) visit(v)
    }
    depth--; state[u] = 2
}
END {
    for (u in nodes) state[u] = 0
    for (u in nodes) if (state[u] == 0) visit(u)
    exit bad
}' 
}
printf '%s\n' "$edges" | check_graph includes || status=1
if [ -n "$OBJ" ]; then
    # symbol -> defining module, then "caller callee object" for every undefined reference
    defs=$(for o in "$OBJ"/*.o; do m=$(basename "$o" .o); nm -g --defined-only "$o" | awk -v m="$m" 'NF == 3 {print $3, m}'; done)
    calls=$(for o in "$OBJ"/*.o; do
        m=$(basename "$o" .o)
        nm -u "$o" | awk '{print $NF}' | while read -r sym; do echo "$sym $m $o"; done
    done | awk -v defs="$defs" 'BEGIN { n = split(defs, d, "\n"); for (i = 1; i <= n; i++) { split(d[i], w, " "); owner[w[1]] = w[2] } }
        ($1 in owner) && owner[$1] != $2 { print $2, owner[$1], $3 ": " $1 }' | sort -u)
    printf '%s\n' "$calls" | awk '{print $1, $2, $3}' | check_graph calls || status=1
fi
# function lengths: a definition starts at column 0 and ends at the first "}" at column 0
for f in src/*/*.c; do
    [ -f "$f" ] || continue
    awk -v F="$f" -v maxl="$MAX_LINES" '
    /^[A-Za-z].*\(/ && !/;[ \t]*$/ && !/^(typedef|struct|enum|static const|const)/ { name = $0; start = NR }
    /^}/ { if (start && NR - start > maxl) { printf "check_structure: %s:%d: function of %d lines (over %d): %s\n", F, start, NR - start, maxl, name; bad = 1 } start = 0 }
    END { exit bad }' "$f" || status=1
done
[ $status = 0 ] && echo "check_structure: $(echo "$files" | wc -w) files, layers, include${OBJ:+ and call} graph clean, no function over $MAX_LINES lines"
exit $status
