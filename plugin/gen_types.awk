# gen_types.awk - turn pcie_types.db into a C table of data sets, so the
# types file shipped for network receivers and the data sets the plugin
# registers can never disagree.
BEGIN {
	print "/* Generated from pcie_types.db by gen_types.awk: do not edit. */"
	print "#include \"pcie_types.h\""
	print ""
	print "const struct pcie_type_def pcie_type_defs[] = {"
}
/^[ \t]*#/ || NF == 0 { next }
{
	if (NF != 2) { printf "pcie_types.db:%d: expected \"name ds:TYPE:min:max\"\n", NR > "/dev/stderr"; exit 1 }
	split($2, f, ":")
	if (f[1] != "value" || (f[2] != "GAUGE" && f[2] != "DERIVE")) {
		printf "pcie_types.db:%d: one data source named value, GAUGE or DERIVE\n", NR > "/dev/stderr"; exit 1
	}
	min = f[3] == "U" ? "NAN" : f[3]
	max = f[4] == "U" ? "NAN" : f[4]
	printf "\t{\"%s\", DS_TYPE_%s, %s, %s},\n", $1, f[2], min, max
}
END {
	print "\t{NULL, 0, 0, 0},"
	print "};"
}
