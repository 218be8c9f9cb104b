#!/bin/bash
# format.sh - the tree stays clang-formatted (.clang-format).
. "$(dirname "$0")/lib.sh"

CLANG_FORMAT=${CLANG_FORMAT:-$(command -v clang-format)}
[ -x "$CLANG_FORMAT" ] || skip_all "clang-format is not installed"
cd "$top_srcdir" || exit 1
for f in collectors/*.[ch] engine/*.[ch] writer/*.[ch] plugin/*.[ch] cli/*.[ch] netdata/*.[ch] sim/*.[ch] tests/unit/*.[ch] tests/tools/*.[ch] tests/bench/*.[ch] tests/fuzz/*.[ch]; do
	[ -f "$f" ] || continue
	check "clang-format: $f" "$CLANG_FORMAT" --dry-run -Werror "$f" 2>/dev/null
done
done_testing
