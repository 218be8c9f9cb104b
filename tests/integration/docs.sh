#!/bin/bash
# docs.sh - the README is a front door and docs/ holds the rest:
#   1. README.md has at most 200 lines, and its Quick start has the command
#      CI runs (.ci/run);
#   2. every docs/*.md page is in the README's map, and every relative link
#      of README.md, docs/*.md, dashboards/README.md and packaging/README.md
#      (pages and pictures) reaches a file, and
#      its #anchor a heading of that page (GitHub's anchors);
#   3. every section the README had before it moved (the headings in
#      tests/fixtures/readme_sections.txt) is a heading of the page named
#      there;
#   4. the README's minimal collectd.conf is accepted by a real collectd
#      with the built plugins (collectd -T, its URL on a closed loopback
#      port).
. "$(dirname "$0")/lib.sh"

readme="$top_srcdir/README.md"
command -v "$PYTHON3" >/dev/null || skip_all "python3 is not installed"

n=$(wc -l <"$readme")
check "README.md has at most 200 lines ($n)" [ "$n" -le 200 ]
if [ -f "$top_srcdir/.ci/run" ]; then
	ci=$(sed -n 's/.*exec \(bash scripts\/[a-z]*\).*/\1/p' "$top_srcdir/.ci/run")
	check "the README's Quick start has CI's command ($ci)" \
		eval "[ -n \"\$ci\" ] && awk '/^## Quick start/ { on = 1; next } on && /^## / { exit } on' \"\$readme\" | grep -qF -- \"\$ci\""
else
	ok "the README's Quick start has CI's command # SKIP no .ci/run (a release tarball)"
fi

# Links and sections: one result per line, "ok TEXT" or "not_ok TEXT".
while IFS= read -r line; do
	case $line in
	"ok "*) ok "${line#ok }" ;;
	*) not_ok "${line#not_ok }" ;;
	esac
done < <("$PYTHON3" - "$top_srcdir" "$top_srcdir/tests/fixtures/readme_sections.txt" <<'PY'
import glob, os, re, sys, unicodedata

top, sections = sys.argv[1], sys.argv[2]
pages = ["README.md"] + sorted(os.path.relpath(p, top) for p in glob.glob(os.path.join(top, "docs", "*.md")))

def prose(path):
    """The lines of a page outside code blocks (fenced or indented)."""
    out, fence, prev_blank = [], False, True
    for line in open(os.path.join(top, path), encoding="utf-8").read().split("\n"):
        if line.startswith("```"):
            fence = not fence
            out.append("")
            continue
        if fence or (line.startswith("    ") and prev_blank and not re.match(r"^ *([-*]|\d+\.) ", line)):
            out.append("")
            continue
        if line.startswith("<!--"):
            # A comment line (a generated block's marker) reads as a blank.
            out.append("")
            prev_blank = True
            continue
        prev_blank = not line.strip() or (line.startswith("    ") and prev_blank)
        out.append(line)
    return out

def headings(path):
    return [m.group(2).strip() for m in (re.match(r"^(#+) (.*)$", l) for l in prose(path)) if m]

def slug(text):
    """GitHub's anchor of a heading."""
    s = text.strip().lower()
    s = "".join(c for c in s if c in " -_" or unicodedata.category(c)[0] in "LN")
    return s.replace(" ", "-")

def anchors(path):
    seen, out = {}, set()
    for h in headings(path):
        a = slug(h)
        if a in seen:
            seen[a] += 1
            out.add("%s-%d" % (a, seen[a]))
        else:
            seen[a] = 0
            out.add(a)
    return out

# 2. The README's map names every page of docs/.
readme_links = set()
for line in prose("README.md"):
    for m in re.finditer(r"\]\((docs/[^)#\s]+)", line):
        readme_links.add(m.group(1))
for p in pages[1:]:
    print(("ok " if p in readme_links else "not_ok ") + "the README's map links %s" % p)

# Every relative link resolves, with its anchor (the folders' READMEs too).
bad = 0
count = 0
for page in pages + ["dashboards/README.md", "packaging/README.md"]:
    text = "\n".join(prose(page))
    # Inline code is not a link (blanked, keeping line breaks for the numbers).
    text = re.sub(r"`[^`]*`", lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)
    # A link's text may span lines.
    for m in re.finditer(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)", text):
        target = m.group(1)
        no = text.count("\n", 0, m.start()) + 1
        if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("/"):
            continue
        count += 1
        path, _, anchor = target.partition("#")
        dest = os.path.normpath(os.path.join(os.path.dirname(page), path)) if path else page
        if not os.path.exists(os.path.join(top, dest)):
            bad += 1
            print("not_ok %s:%d: link %s: no file %s" % (page, no, target, dest))
            continue
        if anchor and dest.endswith(".md") and anchor not in anchors(dest):
            bad += 1
            print("not_ok %s:%d: link %s: %s has no heading with that anchor" % (page, no, target, dest))
print("ok %d relative links of %d pages checked" % (count, len(pages) + 2) if count > 50 else
      "not_ok only %d relative links found in %d pages" % (count, len(pages) + 2))
if not bad:
    print("ok every relative link reaches its file and anchor")

# 3. Every section the README had is a heading of its page now.
for line in open(sections, encoding="utf-8"):
    line = line.rstrip("\n")
    if not line or line.startswith("#"):
        continue
    head, page = line.split("\t")
    if not os.path.exists(os.path.join(top, page)):
        print("not_ok section '%s': no page %s" % (head, page))
    elif head in headings(page):
        print("ok section '%s' is in %s" % (head, page))
    else:
        print("not_ok section '%s' is in %s (moved? change tests/fixtures/readme_sections.txt)" % (head, page))
PY
)

# 4. The minimal collectd.conf, as a real collectd reads it.
COLLECTD=${COLLECTD:-$(command -v collectd || echo /usr/sbin/collectd)}
libs="$top_builddir/plugin/.libs"
conf=$(awk '/^## A minimal collectd.conf/ { on = 1; next } on && /^## / { exit } on && /^    / { print substr($0, 5) }' "$readme")
check "the README has a minimal collectd.conf ($(echo "$conf" | wc -l) lines)" grep -q '^LoadPlugin pcie' <<<"$conf"
if [ -x "$COLLECTD" ] && [ -f "$libs/pcie.so" ] && [ -f "$libs/remote_write.so" ]; then
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	mkdir "$tmp/plugins"
	cp "$libs/pcie.so" "$libs/remote_write.so" "$tmp/plugins/"
	{
		echo "BaseDir \"$tmp\""
		echo "PIDFile \"$tmp/collectd.pid\""
		echo "PluginDir \"$tmp/plugins\""
		sed 's|URL "http://[^/"]*/|URL "http://127.0.0.1:1/|' <<<"$conf"
	} >"$tmp/collectd.conf"
	timeout 60 "$COLLECTD" -T -C "$tmp/collectd.conf" >"$tmp/out" 2>&1
	rc=$?
	check "collectd -T accepts the README's collectd.conf (exit $rc$( [ $rc -ne 0 ] && echo ": $(grep -m1 -i error "$tmp/out")"))" [ $rc -eq 0 ]
else
	ok "collectd -T accepts the README's collectd.conf # SKIP collectd or the built pcie/remote_write plugins are missing"
fi
done_testing
