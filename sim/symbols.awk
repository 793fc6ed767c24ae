# sim/symbols.awk — turns sim/symbols.txt into
#   mode=header            a C X-macro list: SIM_SYM(name, "first", "from", "until")
#   mode=map driver=X.Y.Z  a linker version script exporting what driver X.Y.Z had
#   mode=map driver=all    ... exporting every symbol (the full library)
function vcmp(a, b,    x, y, i, n, m) {
    n = split(a, x, ".")
    m = split(b, y, ".")
    for (i = 1; i <= 3; i++) {
        if ((x[i] + 0) < (y[i] + 0)) return -1
        if ((x[i] + 0) > (y[i] + 0)) return 1
    }
    return 0
}
function has(sym_first, sym_from, sym_until) {
    if (driver == "all") return 1
    if (vcmp(driver, sym_first) < 0) return 0
    if (sym_from != "" && vcmp(driver, sym_from) >= 0 && vcmp(driver, sym_until) < 0) return 0
    return 1
}
BEGIN {
    if (mode == "map") print "/* generated from sim/symbols.txt for driver " driver " */\n{\n  global:"
    else print "/* generated from sim/symbols.txt by sim/symbols.awk; do not edit */"
}
/^[ \t]*(#|$)/ { next }
{
    if (NF != 2 && NF != 4) { print "symbols.txt:" NR ": expected 2 or 4 columns" > "/dev/stderr"; exit 1 }
    from = (NF == 4) ? $3 : ""
    until = (NF == 4) ? $4 : ""
    if (mode == "map") {
        if (has($2, from, until)) print "    " $1 ";"
    } else {
        printf "SIM_SYM(%s, \"%s\", \"%s\", \"%s\")\n", $1, $2, from, until
    }
}
END {
    if (mode == "map") print "    migmon_sim_call_count;\n    migmon_sim_call_reset;\n    migmon_sim_check_scenario;\n  local:\n    *;\n};"
}
