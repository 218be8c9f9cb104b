# gen_families.awk - everything that names a metric family, from one spec
# (metrics/families.spec; its header says the format).
#
#   awk -v out=header  -f gen_families.awk families.spec            > pcie_families.h
#   awk -v out=table   -f gen_families.awk families.spec            > pcie_families.c
#   awk -v out=catalog -f gen_families.awk families.spec            > prom_catalog_table.c
#   awk -v out=types   -f gen_families.awk families.spec            > pcie_types.db
#   awk -v out=docs -v docs=metrics.md -f gen_families.awk families.spec > metrics.md.new
#   awk -v out=identity -f gen_families.awk families.spec          > pcie_identity_rules.c
#   awk -v out=netdata -f gen_families.awk families.spec           > nd_charts_table.c
#   awk -v out=netdata-docs -v docs=netdata.md -f gen_families.awk families.spec > netdata.md.new
#
# The .c files are build products (pcie_identity_rules.c: the collectd
# identity rules of the pcie plugin, plugin/pcie_identity.h;
# nd_charts_table.c: pcie.plugin's chart table, netdata/nd_charts_table.h);
# pcie_families.h, pcie_types.db, the tables of docs/metrics.md (the
# reference tables, the series budget's detail column) and the chart table
# of docs/netdata.md are checked in, and tests/integration/families.sh fails
# when they differ from what this script makes of the spec.
BEGIN {
	RS = ""
	FS = "\n"
	nfam = 0
	nrow = 0
	nsec = 0
	kinds["gauge"] = "PCIE_METRIC_GAUGE"
	kinds["counter"] = "PCIE_METRIC_COUNTER"
	kinds["float-counter"] = "PCIE_METRIC_FLOAT_COUNTER"
	kinds["info"] = "PCIE_METRIC_INFO"
	kinds["histogram"] = "PCIE_METRIC_HISTOGRAM"
	nchart = 0
	# Netdata units of the spec's named unit kinds: the SET value is
	# round(value * scale), the DIMENSION divisor takes it back.
	nd_units["bandwidth"] = "KiB/s"; nd_scale["bandwidth"] = "1e3"; nd_div["bandwidth"] = "1024000"       # milli-bytes/s
	nd_units["ratio"] = "percentage"; nd_scale["ratio"] = "1e9"; nd_div["ratio"] = "10000000"          # nano-ratio
	nd_units["seconds"] = "nanoseconds"; nd_scale["seconds"] = "1e12"; nd_div["seconds"] = "1000"      # picoseconds
	split("chart family need title units scale divisor doc-units netdata-family type chart-by dim-by dim-name incremental absent-zero doc-dimensions doc-from", t, " ")
	for (i in t)
		chart_keys[t[i]] = 1
	if (out !~ /^(header|table|catalog|types|docs|identity|netdata|netdata-docs)$/)
		die("out must be header, table, catalog, types, docs, identity, netdata or netdata-docs")
	if ((out == "docs" || out == "netdata-docs") && docs == "")
		die("out=" out " needs -v docs=FILE")
}

function die(msg) {
	printf "gen_families.awk: %s\n", msg > "/dev/stderr"
	failed = 1
	exit 1
}

function fail(msg) { die(FILENAME ":" FNR ": " msg) }

function cstr(s) {
	gsub(/\\/, "\\\\", s)
	gsub(/"/, "\\\"", s)
	return "\"" s "\""
}

# PCIE_FAM_<NAME without the pcie_ prefix, upper case>
function constant(name, c) {
	c = name
	sub(/^pcie_/, "", c)
	return "PCIE_FAM_" toupper(c)
}

# Reads one stanza of the spec into rec[] (key -> value), and its
# collectd-identity lines (the one key given more than once) into
# ident[1..nident].
function parse(   i, line, key, n) {
	split("", rec)
	nident = 0
	n = 0
	for (i = 1; i <= NF; i++) {
		line = $i
		if (line ~ /^[ \t]*#/ || line ~ /^[ \t]*$/)
			continue
		if (!match(line, /^[a-z-]+[ \t]+/))
			fail("expected \"key value\": " line)
		key = line
		sub(/[ \t].*/, "", key)
		if (key == "collectd-identity") {
			ident[++nident] = substr(line, RLENGTH + 1)
			check_identity(ident[nident])
			n++
			continue
		}
		if (key in rec)
			fail("key " key " given twice")
		rec[key] = substr(line, RLENGTH + 1)
		n++
	}
	return n
}

{
	if (!parse())
		next
	if ("chart" in rec) {
		chart()
		next
	}
	if ("title" in rec) {
		if (!("section" in rec) || !("header" in rec))
			fail("a section stanza has section, title and header")
		s = rec["section"]
		if (s in sec_title)
			fail("section " s " given twice")
		sec_order[++nsec] = s
		sec_title[s] = rec["title"]
		sec_header[s] = rec["header"]
		next
	}
	if (!("family" in rec) || !("section" in rec))
		fail("a family stanza has family and section")
	f = rec["family"]
	s = rec["section"]
	if (f !~ /^[a-z_][a-z0-9_]*$/)
		fail("family " f ": not a Prometheus name")
	if (!(s in sec_title))
		fail("family " f ": section " s " is not declared above")
	if ("help" in rec) {
		if (f in fam_kind)
			fail("family " f " is declared twice (another section's row has no help, type, unit or collectd)")
		if (!("type" in rec) || !(rec["type"] in kinds))
			fail("family " f ": type is gauge, counter, float-counter, info or histogram")
		if (!("unit" in rec))
			fail("family " f ": no unit (- when none)")
		if (rec["unit"] != "-" && substr(f, length(f) - length(rec["unit"]) + 1) != rec["unit"] &&
		    f !~ ("_" rec["unit"] "_total$"))
			fail("family " f ": the unit " rec["unit"] " is not a suffix of the name")
		fam_order[++nfam] = f
		fam_kind[f] = rec["type"]
		fam_unit[f] = rec["unit"] == "-" ? "" : rec["unit"]
		fam_help[f] = rec["help"]
		fam_detail[f] = rec["detail"]
		fam_section[f] = s
		if ("collectd" in rec) {
			split(rec["collectd"], ct, /[ \t]+/)
			if (ct[2] !~ /^value:(GAUGE|DERIVE):[0-9U]+:[0-9U]+$/)
				fail("family " f ": collectd is \"type value:GAUGE|DERIVE:min:max\"")
			fam_ctype[f] = ct[1]
			if (ct[1] in type_ds) {
				if (type_ds[ct[1]] != ct[2])
					fail("collectd type " ct[1] " has two data sets")
			} else {
				type_ds[ct[1]] = ct[2]
				type_order[++ntype] = ct[1]
				type_section[ct[1]] = s
			}
		}
	} else {
		if (!(f in fam_kind))
			fail("family " f ": first row has no help (type, unit, help, collectd come first)")
		for (k in rec)
			if (k == "type" || k == "unit" || k == "collectd" || k == "detail")
				fail("family " f ": " k " belongs to the family's first row")
	}
	for (i = 1; i <= nident; i++)
		fam_ident[f] = fam_ident[f] ident[i] "\n"
	if ("netdata" in rec && index(" " fam_netdata[f] " ", " " rec["netdata"] " ") == 0) {
		fam_netdata[f] = fam_netdata[f] (fam_netdata[f] == "" ? "" : " ") rec["netdata"]
		netdata_at[rec["netdata"]] = FILENAME ":" FNR
	}
	if (rec["doc-row"] == "no")
		next
	if (!("type-instance" in rec) || !("doc-kind" in rec) || !("doc-unit" in rec) ||
	    !("labels" in rec) || !("source" in rec))
		fail("family " f ": a row of docs/metrics.md needs type-instance, doc-kind, doc-unit, labels, source")
	name = ("doc-name" in rec) ? rec["doc-name"] : "`" f "`"
	ti = rec["type-instance"]
	cell = (f in fam_ctype) ? "`" fam_ctype[f] "` / " ti : ti
	rows[s] = rows[s] "| " name " | " cell " | " rec["doc-kind"] " | " rec["doc-unit"] " | " rec["labels"] " | " rec["source"] " |\n"
}

END {
	if (failed)
		exit 1
	for (i = 1; i <= nfam; i++) {
		f = fam_order[i]
		n = split(fam_netdata[f], t, " ")
		for (k = 1; k <= n; k++)
			if (!(substr(t[k], 6) in ch_fam) || ch_fam[substr(t[k], 6)] != f || t[k] !~ /^pcie\./)
				die(netdata_at[t[k]] ": family " f ": netdata " t[k] " has no chart stanza of that family")
		if ((f in fam_ctype) != (fam_ident[f] != ""))
			die("family " f ": a value of the pcie plugin (collectd) has collectd-identity lines, another family none")
	}
	if (out == "header") emit_header()
	else if (out == "table") emit_table()
	else if (out == "catalog") emit_catalog()
	else if (out == "types") emit_types()
	else if (out == "docs") emit_docs()
	else if (out == "identity") emit_identity()
	else if (out == "netdata") emit_netdata()
	else if (out == "netdata-docs") emit_netdata_docs()
}

# "INSTANCE TYPE-INSTANCE": two templates of text and {references} (the
# spec's header says which).
function check_identity(v,   t, n, i, r) {
	n = split(v, t, /[ \t]+/)
	if (n != 2)
		fail("collectd-identity is \"INSTANCE TYPE-INSTANCE\": " v)
	for (i = 1; i <= 2; i++) {
		r = t[i]
		while (match(r, /\{[^{}]*\}/)) {
			if (substr(r, RSTART + 1, RLENGTH - 2) !~ /^([a-z_]+|[a-z_]+=[^=*]+\*?|@series|\??pcie_[a-z_]+\[[a-z_]+=[a-z_]+\](\.[a-z_]+)?)$/)
				fail("collectd-identity: not a reference: " substr(r, RSTART, RLENGTH))
			r = substr(r, 1, RSTART - 1) substr(r, RSTART + RLENGTH)
		}
		if (r ~ /[{}]/)
			fail("collectd-identity: unbalanced braces: " t[i])
	}
}

function emit_identity(   i, f, n, k, line, t) {
	print "/* Generated from metrics/families.spec by metrics/gen_families.awk: do not edit. */"
	print "#include <stddef.h>"
	print ""
	print "#include \"pcie_identity.h\""
	print ""
	for (i = 1; i <= nfam; i++) {
		f = fam_order[i]
		if (fam_ident[f] == "")
			continue
		printf "static const struct pcie_identity_rule %s_rules[] = {\n", f
		n = split(fam_ident[f], line, "\n")
		for (k = 1; k < n; k++) {
			split(line[k], t, /[ \t]+/)
			printf "\t{%s, %s},\n", cstr(t[1] == "-" ? "" : t[1]), cstr(t[2] == "-" ? "" : t[2])
		}
		print "\t{NULL, NULL},"
		print "};"
	}
	print ""
	print "const struct pcie_identity_rule *const pcie_identity_rules[PCIE_FAMILY_COUNT] = {"
	for (i = 1; i <= nfam; i++)
		if (fam_ident[fam_order[i]] != "")
			printf "\t[%s_ID] = %s_rules,\n", constant(fam_order[i]), fam_order[i]
	print "};"
}

function emit_header(   i, f) {
	print "/* Generated from metrics/families.spec by metrics/gen_families.awk: do not"
	print " * edit; make update-families rewrites it. */"
	print "// clang-format off"
	print "#ifndef PCIESCOPE_PCIE_FAMILIES_H"
	print "#define PCIESCOPE_PCIE_FAMILIES_H"
	print ""
	print "#include \"sample.h\""
	print ""
	print "enum pcie_family_id {"
	for (i = 1; i <= nfam; i++)
		printf "\t%s_ID,\n", constant(fam_order[i])
	print "\tPCIE_FAMILY_COUNT"
	print "};"
	print ""
	print "extern const struct pcie_family pcie_families[PCIE_FAMILY_COUNT];"
	print ""
	print "/* The family called @name (a histogram without its series suffix), or NULL. */"
	print "const struct pcie_family *pcie_family_find(const char *name);"
	print ""
	for (i = 1; i <= nfam; i++)
		printf "#define %s (&pcie_families[%s_ID])\n", constant(fam_order[i]), constant(fam_order[i])
	print ""
	print "#endif"
	print "// clang-format on"
}

function emit_table(   i, f) {
	print "/* Generated from metrics/families.spec by metrics/gen_families.awk: do not edit. */"
	print "#include <stddef.h>"
	print "#include <string.h>"
	print ""
	print "#include \"pcie_families.h\""
	print ""
	print "const struct pcie_family pcie_families[PCIE_FAMILY_COUNT] = {"
	for (i = 1; i <= nfam; i++) {
		f = fam_order[i]
		printf "\t[%s_ID] = {\n", constant(f)
		printf "\t\t.name = %s,\n", cstr(f)
		printf "\t\t.kind = %s,\n", kinds[fam_kind[f]]
		printf "\t\t.unit = %s,\n", cstr(fam_unit[f])
		printf "\t\t.help = %s,\n", cstr(fam_help[f])
		printf "\t\t.collectd_type = %s,\n", (f in fam_ctype) ? cstr(fam_ctype[f]) : "NULL"
		if (fam_kind[f] == "histogram") {
			printf "\t\t.bucket = %s,\n", cstr(f "_bucket")
			printf "\t\t.sum = %s,\n", cstr(f "_sum")
			printf "\t\t.count = %s,\n", cstr(f "_count")
		}
		print "\t},"
	}
	print "};"
	print ""
	print "const struct pcie_family *pcie_family_find(const char *name)"
	print "{"
	print "\tfor (size_t i = 0; i < PCIE_FAMILY_COUNT; i++)"
	print "\t\tif (!strcmp(pcie_families[i].name, name))"
	print "\t\t\treturn &pcie_families[i];"
	print "\treturn NULL;"
	print "}"
}

# Catalog names: the family as docs/metrics.md names it (counters end in
# _total already in the spec), sorted for prom_catalog_find's bisection.
function emit_catalog(   i, j, n, t, names) {
	n = 0
	for (i = 1; i <= nfam; i++)
		names[++n] = fam_order[i]
	for (i = 2; i <= n; i++) {
		t = names[i]
		for (j = i - 1; j >= 1 && names[j] > t; j--)
			names[j + 1] = names[j]
		names[j + 1] = t
	}
	print "/* Generated from metrics/families.spec by metrics/gen_families.awk: do not edit. */"
	print "#include \"prom_catalog.h\""
	print ""
	print "const struct prom_family_doc prom_catalog_table[] = {"
	for (i = 1; i <= n; i++)
		printf "\t{%s, %s, %s},\n", cstr(names[i]), cstr(fam_unit[names[i]]), cstr(fam_help[names[i]])
	print "};"
	print ""
	print "const size_t prom_catalog_table_len = sizeof(prom_catalog_table) / sizeof(prom_catalog_table[0]);"
}

function emit_types(   i, t, s, last) {
	print "# Data sets of the collectd `pcie` plugin (pciescope)."
	print "#"
	print "# The plugin registers these itself (plugin_register_data_set), so a local"
	print "# collectd needs no TypesDB line. A collectd *server* that receives pcie values"
	print "# over the network plugin needs this file:"
	print "#   TypesDB \"/usr/share/collectd/types.db\" \"/usr/share/pciescope/pcie_types.db\""
	print "# (giving TypesDB at all replaces the default list, so name both)."
	print "# Format: types.db(5). Generated from metrics/families.spec (make update-families);"
	print "# the build generates plugin/pcie_types.c from this file."
	last = ""
	for (i = 1; i <= ntype; i++) {
		t = type_order[i]
		s = type_section[t]
		if (s != last)
			printf "# %s\n", sec_title[s]
		last = s
		printf "%-32s %s\n", t, type_ds[t]
	}
}

# docs: @docs with the table between <!-- families:SECTION:begin --> and
# <!-- families:SECTION:end --> made from the rows of SECTION.
function emit_docs(   line, s, inside, seen, i, f, n, cell, budget) {
	RS = "\n"
	inside = ""
	while ((getline line < docs) > 0) {
		if (match(line, /^<!-- families:[a-z_]+:begin -->$/)) {
			s = line
			sub(/^<!-- families:/, "", s)
			sub(/:begin -->$/, "", s)
			if (!(s in sec_title))
				die(docs ": no section " s " in the spec")
			print line
			print sec_header[s]
			print "|---|---|---|---|---|---|"
			printf "%s", rows[s]
			inside = s
			seen[s] = 1
			continue
		}
		# The budget table's "from which detail" cell is the spec's detail;
		# its counts are series_budget.sh's.
		if (line == "<!-- budget:begin -->")
			budget = 1
		else if (line == "<!-- budget:end -->")
			budget = 0
		else if (budget && match(line, /^\| `[a-z_]+` \| /)) {
			f = substr(line, 4, RLENGTH - 7)
			if (!(f in fam_detail) && sub(/_bucket$/, "", f) && fam_kind[f] != "histogram")
				f = ""
			if (f in fam_detail && fam_detail[f] != "") {
				n = split(line, cell, / \| /)
				# name, labels, per, detail, then one count per machine
				if (n < 7)
					die(docs ": a budget row without at least 7 cells: " line)
				cell[4] = fam_detail[f]
				line = cell[1]
				for (i = 2; i <= n; i++)
					line = line " | " cell[i]
			}
		}
		if (inside != "") {
			if (line == "<!-- families:" inside ":end -->") {
				print line
				inside = ""
			}
			continue
		}
		print line
	}
	if (inside != "")
		die(docs ": no end marker for section " inside)
	for (i = 1; i <= nsec; i++)
		if (!(sec_order[i] in seen) && rows[sec_order[i]] != "")
			die(docs ": section " sec_order[i] " has no table (<!-- families:" sec_order[i] ":begin -->)")
}

# A chart stanza: one row of pcie.plugin's chart table (the spec's header
# says the keys).
function chart(   k, c, f, n, t, by) {
	for (k in rec)
		if (!(k in chart_keys))
			fail("chart " rec["chart"] ": no key " k " in a chart stanza")
	c = rec["chart"]
	f = rec["family"]
	if (c !~ /^[a-z][a-z0-9_]*$/)
		fail("chart " c ": the context is pcie.<letters, digits, _>")
	if (c in ch_fam)
		fail("chart " c " given twice")
	if (!(f in fam_kind))
		fail("chart " c ": family " f " is not declared above")
	if (index(" " fam_netdata[f] " ", " pcie." c " ") == 0)
		fail("chart " c ": family " f " does not give netdata pcie." c)
	for (k in chart_keys)
		if (k ~ /^(title|units|netdata-family|type|doc-dimensions)$/ && !(k in rec))
			fail("chart " c ": no " k)
	if (rec["type"] !~ /^(line|area|stacked)$/)
		fail("chart " c ": type is line, area or stacked")
	for (k in rec) {
		if (k ~ /^(title|units|netdata-family)$/ && rec[k] ~ /'/)
			fail("chart " c ": the plugins.d protocol quotes with ', " k " cannot hold one")
		if (k ~ /^(incremental|absent-zero)$/ && rec[k] != "yes")
			fail("chart " c ": " k " is yes or absent")
	}
	if (("dim-by" in rec) == ("dim-name" in rec))
		fail("chart " c ": dimensions are named by dim-by labels or one dim-name")
	for (k in rec)
		if (k ~ /^(chart-by|dim-by)$/ && (split(rec[k], t, /[ \t]+/) > 2 || rec[k] !~ /^[a-z_ ]+$/))
			fail("chart " c ": " k " is one or two label names")
	if (rec["units"] in nd_units) {
		if ("scale" in rec || "divisor" in rec)
			fail("chart " c ": units " rec["units"] " has its own scale and divisor")
		ch_units[c] = nd_units[rec["units"]]
		ch_scale[c] = nd_scale[rec["units"]]
		ch_div[c] = nd_div[rec["units"]]
	} else {
		ch_units[c] = rec["units"]
		ch_scale[c] = ("scale" in rec) ? rec["scale"] : "1"
		ch_div[c] = ("divisor" in rec) ? rec["divisor"] : "1"
		if (ch_scale[c] !~ /^[0-9]+(\.[0-9]+)?(e[0-9]+)?$/ || ch_div[c] !~ /^[1-9][0-9]*$/)
			fail("chart " c ": scale is a number, divisor a positive integer")
	}
	chart_order[++nchart] = c
	ch_fam[c] = f
	ch_need[c] = rec["need"]
	ch_title[c] = rec["title"]
	ch_ndfam[c] = rec["netdata-family"]
	ch_type[c] = rec["type"]
	ch_by[c] = rec["chart-by"]
	ch_dimby[c] = rec["dim-by"]
	ch_dimname[c] = rec["dim-name"]
	ch_incr[c] = rec["incremental"] == "yes"
	ch_zero[c] = rec["absent-zero"] == "yes"
	ch_docunits[c] = ("doc-units" in rec) ? rec["doc-units"] : ch_units[c]
	ch_docdims[c] = rec["doc-dimensions"]
	ch_docfrom[c] = rec["doc-from"]
}

# {"a", "b"} of one or two space-separated label names; {NULL} for none.
function clabels(list,   t, n, i, r) {
	n = split(list, t, /[ \t]+/)
	if (n == 0)
		return "{NULL}"
	r = "{"
	for (i = 1; i <= n; i++)
		r = r (i > 1 ? ", " : "") cstr(t[i])
	return r "}"
}

function emit_netdata(   i, c) {
	print "/* Generated from metrics/families.spec by metrics/gen_families.awk: do not edit. */"
	print "// clang-format off"
	print "#include <stddef.h>"
	print ""
	print "#include \"nd_charts_table.h\""
	print "#include \"pcie_families.h\""
	print ""
	print "const struct nd_map nd_maps[] = {"
	for (i = 1; i <= nchart; i++) {
		c = chart_order[i]
		print "\t{"
		printf "\t\t.fam = %s,\n", constant(ch_fam[c])
		printf "\t\t.need = %s,\n", ch_need[c] == "" ? "NULL" : cstr(ch_need[c])
		printf "\t\t.context = %s,\n", cstr(c)
		printf "\t\t.title = %s,\n", cstr(ch_title[c])
		printf "\t\t.units = %s,\n", cstr(ch_units[c])
		printf "\t\t.family = %s,\n", cstr(ch_ndfam[c])
		printf "\t\t.type = %s,\n", cstr(ch_type[c])
		printf "\t\t.chart_by = %s,\n", clabels(ch_by[c])
		printf "\t\t.dim_by = %s,\n", clabels(ch_dimby[c])
		printf "\t\t.dim_name = %s,\n", ch_dimname[c] == "" ? "NULL" : cstr(ch_dimname[c])
		printf "\t\t.scale = %s,\n", ch_scale[c]
		printf "\t\t.divisor = %s,\n", ch_div[c]
		printf "\t\t.incremental = %s,\n", ch_incr[c] ? "true" : "false"
		printf "\t\t.absent_zero = %s,\n", ch_zero[c] ? "true" : "false"
		print "\t},"
	}
	print "};"
	print ""
	print "const size_t nd_maps_len = sizeof(nd_maps) / sizeof(nd_maps[0]);"
	print "// clang-format on"
}

# netdata-docs: @docs with the table between <!-- netdata-charts:begin -->
# and <!-- netdata-charts:end --> made from the chart stanzas.
function emit_netdata_docs(   line, inside, seen, i, c) {
	RS = "\n"
	while ((getline line < docs) > 0) {
		if (line == "<!-- netdata-charts:begin -->") {
			print line
			print "| context | units | dimensions | from |"
			print "|---|---|---|---|"
			for (i = 1; i <= nchart; i++) {
				c = chart_order[i]
				printf "| `pcie.%s` | %s | %s | `%s`%s |\n", c, ch_docunits[c], ch_docdims[c],
				    ch_fam[c], ch_docfrom[c] == "" ? "" : " " ch_docfrom[c]
			}
			inside = seen = 1
			continue
		}
		if (line == "<!-- netdata-charts:end -->")
			inside = 0
		if (!inside)
			print line
	}
	if (!seen || inside)
		die(docs ": no <!-- netdata-charts:begin --> ... <!-- netdata-charts:end --> around the chart table")
}
