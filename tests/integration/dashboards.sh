#!/bin/bash
# dashboards.sh - the dashboards as code (issue 13): the TypeScript type-checks
# (tsc --noEmit) and generates exactly the committed dashboards/grafana/*.json
# (byte for byte: who edits the code regenerates with `make dashboards`), and
# every generated panel has a unit, thresholds, a description naming its
# metric and the $datasource variable; the variables are there.
# node_modules is installed with `npm ci` from the committed lock file once
# per lock file into the build directory (dashboards-npm/).
. "$(dirname "$0")/lib.sh"
command -v node >/dev/null || skip_all "node is not installed (the committed JSON needs no Node; only this check does)"
command -v npm >/dev/null || skip_all "npm is not installed"
src="$top_srcdir/dashboards"
work="$top_builddir/dashboards-npm"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$work"
if ! cmp -s "$src/package-lock.json" "$work/package-lock.json" || [ ! -d "$work/node_modules" ]; then
	cp "$src/package.json" "$src/package-lock.json" "$work/"
	check "npm ci from the committed lock file" \
		npm ci --prefer-offline --no-audit --no-fund --loglevel=error --prefix "$work"
else
	ok "npm ci: node_modules of this lock file already in $work"
fi
# The sources are copied next to that node_modules each run.
rm -rf "$work/src" "$work/build"
cp -r "$src/src" "$src/tsconfig.json" "$work/"
check "tsc --noEmit" bash -c "cd '$work' && node_modules/.bin/tsc --noEmit -p tsconfig.json"
check "tsc builds the generator" bash -c "cd '$work' && node_modules/.bin/tsc -p tsconfig.json"
check "the generator writes the dashboards and the recording rules" \
	bash -c "node '$work/build/src/generate.js' '$tmp/out' '$tmp/rules' >/dev/null"
check "dashboards/alerts/pcie.records.yml is what the code generates (byte for byte)" \
	cmp "$tmp/rules/pcie.records.yml" "$src/alerts/pcie.records.yml"
committed=$(cd "$src/grafana" && ls ./*.json | sort)
generated=$(cd "$tmp/out" 2>/dev/null && ls ./*.json | sort)
check "the same dashboard files as committed ($(echo $committed))" [ "$committed" = "$generated" ]
for f in $generated; do
	check "dashboards/grafana/${f#./} is what the code generates (byte for byte)" cmp "$tmp/out/$f" "$src/grafana/$f"
done
while IFS=$'\t' read -r st desc; do
	check "$desc" [ "$st" = ok ]
done < <("$PYTHON3" "$top_srcdir/tests/tools/dashboards_check.py" struct "$src/grafana" ||
	echo "not ok	dashboards_check.py struct exited $?")
done_testing
