#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""gen_man.py - write pciescope(1) or collectd-pcie(5) from the docs/ pages.

The man pages are not written by hand: they are sections of the reference
pages in docs/ rendered to roff (paragraphs, code blocks, bullet lists, and
the option tables as .TP lists), so an option documented there is in the
man page and the two cannot drift. pciescope(1) is docs/cli.md and the
exporter's section of docs/exporter.md; collectd-pcie(5) is
docs/configuration.md, docs/remote_write.md and the openmetrics plugin's
section of docs/exporter.md. tests/integration/man_pages.sh checks the
other direction: every option the code accepts is in the generated page.
pciescope(1)'s SYNOPSIS and COMMANDS come from the command table itself:
--commands names what `pciescope help --markdown` prints (a code block of
usage lines, then a table of command, needs, what it does); docs/cli.md's
copy of it, between its "generated" markers, is left out of DESCRIPTION.

usage: gen_man.py PAGE VERSION [--commands FILE] DOC.md...   (PAGE: pciescope.1 or collectd-pcie.5)
"""
import re
import sys

DATE = "2026"


def esc(text):
    """Escape roff specials in plain text."""
    text = text.replace("\\", "\\e")
    text = text.replace("-", "\\-")
    return text


def inline(text):
    """Markdown inline markup to roff: `code`, **bold**, [text](link)."""
    out = []
    pos = 0
    # Links keep their text only; a link to another doc keeps the path.
    text = re.sub(r"\[([^\]]+)\]\(([^)]+)\)", lambda m: m.group(1), text)
    for m in re.finditer(r"`([^`]+)`|\*\*([^*]+)\*\*", text):
        out.append(esc(text[pos:m.start()]))
        inner = m.group(1) if m.group(1) is not None else m.group(2)
        # \: after a comma: a break point, so that a long list in code
        # (a default such as a machine mix) does not overrun the line.
        out.append("\\fB" + esc(inner).replace(",", ",\\:") + "\\fR")
        pos = m.end()
    out.append(esc(text[pos:]))
    line = "".join(out)
    return line


def roff_line(line):
    """A text line must not start with . or ' (roff requests)."""
    if line.startswith(".") or line.startswith("'"):
        return "\\&" + line
    return line


def sections(text):
    """[(level, heading, lines)] for every heading, in order."""
    out = []
    cur = None
    for line in text.splitlines():
        m = re.match(r"^(#+) (.*)$", line)
        if m:
            cur = (len(m.group(1)), m.group(2).strip(), [])
            out.append(cur)
            continue
        if cur is not None:
            cur[2].append(line)
    return out


def blocks(lines):
    """Split markdown lines into (kind, payload) blocks."""
    out = []
    i = 0
    n = len(lines)
    while i < n:
        line = lines[i]
        if not line.strip():
            i += 1
            continue
        if line.startswith("    "):
            code = []
            while i < n and (lines[i].startswith("    ") or not lines[i].strip()):
                code.append(lines[i][4:])
                i += 1
            while code and not code[-1].strip():
                code.pop()
            out.append(("code", code))
            continue
        if line.startswith("|"):
            rows = []
            while i < n and lines[i].startswith("|"):
                rows.append(lines[i])
                i += 1
            out.append(("table", rows))
            continue
        if re.match(r"^ *- ", line):
            items = []
            while i < n and lines[i].strip():
                m = re.match(r"^( *)- (.*)$", lines[i])
                if m:
                    items.append([len(m.group(1)), m.group(2)])
                elif items:
                    items[-1][1] += " " + lines[i].strip()
                i += 1
            out.append(("list", items))
            continue
        para = []
        while i < n and lines[i].strip() and not lines[i].startswith("|") \
                and not re.match(r"^ *- ", lines[i]):
            para.append(lines[i].strip())
            i += 1
        out.append(("para", " ".join(para)))
    return out


def split_row(row):
    # Cells are split on | outside backquotes.
    cells = []
    cur = ""
    code = False
    for ch in row.strip().strip("|"):
        if ch == "`":
            code = not code
        if ch == "|" and not code:
            cells.append(cur.strip())
            cur = ""
        else:
            cur += ch
    cells.append(cur.strip())
    return cells


def render_table(rows):
    """An option table as a .TP list: option, argument, then the rest. Any
    other table: its first column is the tag, the others "Column: text."."""
    head = [c.lower() for c in split_row(rows[0])]
    out = []
    if "option" not in head:
        names = split_row(rows[0])
        for row in rows[2:]:
            cells = split_row(row)
            out.append(".TP")
            out.append(roff_line(inline(cells[0])))
            text = ["%s: %s." % (n, c.rstrip(".")) for n, c in zip(names[1:], cells[1:]) if c]
            out.append(roff_line(inline(" ".join(text))))
        return out
    for row in rows[2:]:
        cells = dict(zip(head, split_row(row)))
        tag = inline(cells.get("option", ""))
        arg = cells.get("argument", "")
        if arg:
            tag += " \\fI" + inline(arg).replace("\\fB", "").replace("\\fR", "") + "\\fR"
        out.append(".TP")
        out.append(roff_line(tag))
        text = [cells.get("meaning", "").rstrip(".") + "."]
        if cells.get("default"):
            text.append("Default: " + cells["default"] + ".")
        if cells.get("commands"):
            text.append("Commands: " + cells["commands"] + ".")
        out.append(roff_line(inline(" ".join(text))))
    return out


def render(lines):
    out = []
    for kind, payload in blocks(lines):
        if kind == "code":
            out.append(".PP")
            out.append(".nf")
            out.append(".RS 4")
            out += [roff_line(esc(line)) for line in payload]
            out.append(".RE")
            out.append(".fi")
        elif kind == "table":
            out += render_table(payload)
        elif kind == "list":
            for indent, text in payload:
                if indent:
                    out.append(".RS 2")
                out.append(".IP \\(bu 2")
                out.append(roff_line(inline(text)))
                if indent:
                    out.append(".RE")
        else:
            out.append(".PP")
            out.append(roff_line(inline(payload)))
    return out


def find(secs, title):
    for i, (level, head, lines) in enumerate(secs):
        if head == title:
            return i
    sys.exit("gen_man.py: no page has a section '%s'" % title)


def section_tree(secs, title):
    """A ## section and its ### subsections: [(level, heading, lines)]."""
    i = find(secs, title)
    out = [secs[i]]
    for level, head, lines in secs[i + 1:]:
        if level <= secs[i][0]:
            break
        out.append((level, head, lines))
    return out


def without_first_code(lines):
    """The section's lines less its first code block (shown in SYNOPSIS)."""
    code = [b for b in blocks(lines) if b[0] == "code"][0][1]
    text = "\n".join(lines).replace("\n".join("    " + c if c else c for c in code), "", 1)
    return text.splitlines()


def without_generated(lines):
    """The lines less a generated block (between "<!-- generated" and
    "<!-- end generated -->")."""
    out, skip = [], False
    for line in lines:
        if line.startswith("<!-- generated"):
            skip = True
        elif line.startswith("<!-- end generated"):
            skip = False
        elif not skip:
            out.append(line)
    return out


def render_commands(rows):
    """The command table as a .TP list: the command, then what it does."""
    head = [c.lower() for c in split_row(rows[0])]
    out = []
    for row in rows[2:]:
        cells = dict(zip(head, split_row(row)))
        out.append(".TP")
        out.append(roff_line(inline(cells["command"])))
        text = cells["what it does"] + "."
        if cells.get("needs"):
            text += " Needs " + cells["needs"] + "."
        out.append(roff_line(inline(text)))
    return out


def header(name, sec, version, desc):
    return [
        '.\\" Generated by packaging/gen_man.py from docs/*.md: edit those pages.',
        '.TH %s %s "%s" "pciescope %s" "pciescope"' % (name.upper(), sec, DATE, version),
        ".SH NAME",
        "%s \\- %s" % (name, esc(desc)),
    ]


def page_pciescope(secs, version, commands):
    out = header("pciescope", "1", version,
                 "PCIe topology, link, MPS/MRRS audit, PMU, PTT trace and Intel uncore tool")
    tree = section_tree(secs, "The command line tool")
    table = blocks(commands.splitlines())
    synopsis = [b for b in table if b[0] == "code"][0][1]
    out.append(".SH SYNOPSIS")
    out.append(".nf")
    out += [roff_line(esc(line)) for line in synopsis]
    out.append(".fi")
    out.append(".SH DESCRIPTION")
    out += render(without_generated(tree[0][2]))
    out.append(".SH COMMANDS")
    out += render_commands([b for b in table if b[0] == "table"][0][1])
    for level, head, lines in tree[1:] + section_tree(secs, "pciescope exporter"):
        out.append(".SH " + esc(head.upper()))
        out += render(lines)
    out += [
        ".SH ENVIRONMENT",
        ".TP",
        "\\fBPCIESCOPE_MACHINE_DIR\\fR",
        "where named machines live when \\fB\\-\\-machine\\-dir\\fR is not given.",
        ".SH FILES",
        ".TP",
        "\\fI/usr/share/pciescope/machines/*.json\\fR",
        "the simulated machines (\\fB\\-\\-simulate\\fR \\fINAME\\fR).",
        ".SH SEE ALSO",
        "\\fBcollectd\\-pcie\\fR(5), \\fBlspci\\fR(8), \\fBperf\\fR(1)",
    ]
    return out


def page_collectd(secs, version):
    out = header("collectd-pcie", "5", version,
                 "configuration of pciescope's pcie, remote_write and openmetrics collectd plugins")
    out.append(".SH SYNOPSIS")
    for title in ("The collectd plugin", "The remote_write plugin", "The openmetrics plugin"):
        code = [b for b in blocks(section_tree(secs, title)[0][2]) if b[0] == "code"][0][1]
        out.append(".nf")
        out += [roff_line(esc(line)) for line in code]
        out.append(".fi")
        out.append(".PP")
    for title, sh in (("The collectd plugin", "THE PCIE PLUGIN"),
                      ("The remote_write plugin", "THE REMOTE_WRITE PLUGIN"),
                      ("The openmetrics plugin", "THE OPENMETRICS PLUGIN")):
        tree = section_tree(secs, title)
        out.append(".SH " + sh)
        out += render(without_first_code(tree[0][2]))
        for level, head, lines in tree[1:]:
            out.append(".SS " + esc(head))
            out += render(lines)
    out += [
        ".SH FILES",
        ".TP",
        "\\fI/etc/collectd/collectd.conf.d/pcie.conf\\fR",
        "the packaged configuration (read\\-only defaults, remote_write as a commented example).",
        ".TP",
        "\\fI/usr/share/pciescope/pcie_types.db\\fR",
        "the data sets, for a collectd that receives pcie values over the network plugin.",
        ".TP",
        "\\fI/usr/share/pciescope/machines/*.json\\fR",
        "the simulated machines (\\fBSimulate\\fR).",
        ".SH SEE ALSO",
        "\\fBcollectd.conf\\fR(5), \\fBpciescope\\fR(1), \\fBcollectd\\fR(1)",
    ]
    return out


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__.strip().splitlines()[-1])
    page, version = sys.argv[1:3]
    docs, commands = sys.argv[3:], None
    if docs[:1] == ["--commands"] and len(docs) > 2:
        with open(docs[1], encoding="utf-8") as f:
            commands = f.read()
        docs = docs[2:]
    secs = []
    for doc in docs:
        with open(doc, encoding="utf-8") as f:
            secs += sections(f.read())
    if page == "pciescope.1":
        if commands is None:
            sys.exit("gen_man.py: pciescope.1 needs --commands FILE (`pciescope help --markdown`)")
        out = page_pciescope(secs, version, commands)
    elif page == "collectd-pcie.5":
        out = page_collectd(secs, version)
    else:
        sys.exit("gen_man.py: unknown page %s (pciescope.1 or collectd-pcie.5)" % page)
    sys.stdout.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
