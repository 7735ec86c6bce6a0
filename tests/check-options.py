#!/usr/bin/env python3
"""Every command's option table (cmd/options-*.c, read through tests/options-dump, which links
the very tables numastor does) against what the operator sees (issue 31 item 4):

- man/numastor-CMD.8.scd's OPTIONS (man/numastor.8.scd for the top level) has a term for each
  shown option, with its short letter and its argument as --help writes it, and no other term;
- the bash, zsh (completions/_numastor) and fish completions offer each shown option (the
  short letter too where the shell takes one) with the argument's completion the table's hint
  names (files, directories, its words), and offer no other;
- a hidden option (an old spelling kept as an alias for a release, NEWS.md) is in none of them;
- the same short letter means one thing in every command (a hidden alias aside);
- `numastor CMD --help` shows exactly the shown options, each as the table labels it, and no
  line of it is over 80 columns;
- every command exits 3 on a bad option (numastor(8): every command exits 0-3).

usage: check-options.py BUILD/numastor BUILD/tests/options-dump
"""
import os
import re
import subprocess
import sys

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WIDTH = 80
failures = 0


def fail(msg):
    global failures
    failures += 1
    print(f"FAIL: {msg}")


class Opt:
    def __init__(self, cmd, long, short, arg, argname, complete, words, hidden):
        self.cmd = cmd
        self.long = None if long == "-" else long
        self.short = None if short == "-" else short
        self.arg = arg
        self.argname = None if argname == "-" else argname
        self.complete = complete
        self.words = [] if words == "-" else words.split()
        self.hidden = hidden == "1"

    def name(self):
        return f"--{self.long}" if self.long else f"-{self.short}"

    def label(self):
        """As --help writes it (cmd/options.c ns_option_label)."""
        s = f"-{self.short}, --{self.long}" if self.short and self.long else f"    --{self.long}"
        return s + {"none": "", "required": f" {self.argname}", "word": f"={self.argname}",
                    "optional": f"[={self.argname}]"}[self.arg]

    def man_term(self):
        """As the man page's OPTIONS has its term."""
        s = f"*-{self.short}*, *--{self.long}*" if self.short else f"*--{self.long}*"
        return s + {"none": "", "required": f" _{self.argname}_", "word": f"=_{self.argname}_",
                    "optional": f"[=_{self.argname}_]"}[self.arg]


def load(dump):
    out = subprocess.run([dump], capture_output=True, text=True, check=True).stdout
    tables, commands = {}, []
    for line in out.splitlines():
        f = line.split("\t")
        if f[0] == "command":
            commands.append(f[1])
            continue
        tables.setdefault(f[0], []).append(Opt(*f))
    return tables, commands


def read(*path):
    with open(os.path.join(TOP, *path), encoding="utf-8") as f:
        return f.read()


def block(text, start_re, end_re):
    """The lines from the first match of start_re up to the first match of end_re after it."""
    m = re.search(start_re, text, re.M)
    if not m:
        return None
    e = re.compile(end_re, re.M).search(text, m.end())
    return text[m.end():e.start() if e else len(text)]


# --- man pages ---------------------------------------------------------------------------
def check_man(cmd, opts):
    page = "numastor.8.scd" if cmd == "numastor" else f"numastor-{cmd}.8.scd"
    sect = block(read("man", page), r"^# OPTIONS\n", r"^# ")
    if sect is None:
        return fail(f"man/{page} has no OPTIONS section")
    terms = [line for line in sect.splitlines() if line.startswith("*-")]
    want = {o.man_term() for o in opts if not o.hidden}
    for o in opts:
        if not o.hidden and o.man_term() not in terms:
            fail(f"man/{page}: no term '{o.man_term()}' for {cmd} {o.name()}")
    for t in terms:
        if t not in want:
            fail(f"man/{page}: the term '{t}' is no option of {cmd}'s table (or not as its table has it)")
    for o in opts:
        if o.hidden and any((o.long and f"*--{o.long}*" in t) or (o.short and t.startswith(f"*-{o.short}*"))
                            for t in terms):
            fail(f"man/{page}: the hidden alias {cmd} {o.name()} has a term")


# --- bash ---------------------------------------------------------------------------------
def bash_case_action(blk, pattern_item):
    """The action lines of the `case $prev` branch whose pattern has pattern_item, and the pattern."""
    for m in re.finditer(r"^\t\t([^\t\n][^\n]*)\)\n((?:.*\n)*?)\t\t\t;;", blk, re.M):
        items = [p.strip() for p in m.group(1).split("|")]
        if pattern_item in items:
            return items, m.group(2)
    return None, None


def check_bash(cmd, opts):
    text = read("completions", "numastor.bash")
    if cmd == "numastor":
        blk = block(text, r'^\tif \[\[ -z \$cmd \]\]; then\n', r"^\tfi\n")
        offered = set(re.findall(r"--[a-z-]+", blk or ""))
    else:
        blk = block(text, rf"^\t{re.escape(cmd)}\)\n", r"^\t\t;;\n")
        if blk is None:
            return fail(f"completions/numastor.bash: no branch for {cmd}")
        offered = set()
        for words in re.findall(r'compgen -W "([^"$]*--[^"]*)"', blk):
            offered |= {w.split("=")[0] for w in words.split()}
    for o in opts:
        if o.hidden:
            if o.long and f"--{o.long}" in offered:
                fail(f"completions/numastor.bash offers the hidden alias {cmd} --{o.long}")
            continue
        if f"--{o.long}" not in offered:
            fail(f"completions/numastor.bash does not offer {cmd} --{o.long}")
        if cmd == "numastor" or o.arg not in ("required", "word") or o.complete == "none":
            continue
        items, action = bash_case_action(blk, f"--{o.long}")
        if items is None:
            fail(f"completions/numastor.bash: no completion of {cmd} --{o.long}'s argument ({o.complete})")
            continue
        if o.short and o.arg == "required" and f"-{o.short}" not in items:
            fail(f"completions/numastor.bash: {cmd} -{o.short} is not completed as --{o.long} is")
        if o.complete == "files" and not re.search(r"_filedir(?! -d)", action):
            fail(f"completions/numastor.bash: {cmd} --{o.long} does not complete file names")
        if o.complete == "dirs" and "_filedir -d" not in action:
            fail(f"completions/numastor.bash: {cmd} --{o.long} does not complete directories")
        if o.complete == "words":
            m = re.search(r'compgen -W "([^"$]*)"', action) or re.search(r'local cols="([^"]*)"', action)
            if not m or m.group(1).split() != o.words:
                fail(f"completions/numastor.bash: {cmd} --{o.long} completes {m.group(1).split() if m else None}, "
                     f"its table {o.words}")
    shown = {f"--{o.long}" for o in opts if not o.hidden}
    for w in sorted(offered - shown):
        fail(f"completions/numastor.bash offers {cmd} {w}, which its table does not show")


# --- zsh ----------------------------------------------------------------------------------
def check_zsh(cmd, opts):
    text = read("completions", "_numastor")
    if cmd == "numastor":
        blk = block(text, r"^\t_arguments -C \\\n", r"^\t\t'\*::arg")
    else:
        blk = block(text, rf"^\t\t{re.escape(cmd)}\)\n", r"^\t\t\t;;\n")
    if blk is None:
        return fail(f"completions/_numastor: no branch for {cmd}")
    lines = [line for line in blk.splitlines() if "--" in line or "{-" in line]

    def line_of(o):
        for line in lines:
            spec = re.sub(r"\[[^\]]*\]", "", line)
            if o.short and o.long and f"{{-{o.short},--{o.long}}}" in spec:
                return spec
            if not o.short and re.search(rf"'--{re.escape(o.long)}(=-?)?(:|'|$)", spec):
                return spec
        return None

    for o in opts:
        if o.hidden:
            for line in lines:
                spec = re.sub(r"\[[^\]]*\]", "", line)
                if (o.long and re.search(rf"--{re.escape(o.long)}\b(?!-)", spec)) or \
                        (o.short and re.search(rf"[{{'(]-{o.short}\b", spec)):
                    fail(f"completions/_numastor offers the hidden alias {cmd} {o.name()}")
            continue
        spec = line_of(o)
        if spec is None:
            fail(f"completions/_numastor does not offer {cmd} "
                 + (f"{{-{o.short},--{o.long}}}" if o.short else f"--{o.long}"))
            continue
        if o.arg in ("required", "word") and o.complete != "none":
            if o.complete == "files" and not re.search(r":_files(?! -/)", spec):
                fail(f"completions/_numastor: {cmd} --{o.long} does not complete file names")
            if o.complete == "dirs" and ":_files -/" not in spec:
                fail(f"completions/_numastor: {cmd} --{o.long} does not complete directories")
            if o.complete == "words":
                m = re.search(r":\(([^)]*)\)'?", spec) or re.search(r"compadd - ([^']*)'", spec)
                if not m or m.group(1).split() != o.words:
                    fail(f"completions/_numastor: {cmd} --{o.long} completes {m.group(1).split() if m else None}, "
                         f"its table {o.words}")
    shown = {o.long for o in opts if not o.hidden}
    for line in lines:
        spec = re.sub(r"\[[^\]]*\]", "", line)
        for w in re.findall(r"(?<![\w-])--([a-z][a-z-]*)", spec):
            if w not in shown:
                fail(f"completions/_numastor offers {cmd} --{w}, which its table does not show")


# --- fish ---------------------------------------------------------------------------------
def check_fish(cmd, opts):
    text = read("completions", "numastor.fish")
    cond = "__fish_use_subcommand" if cmd == "numastor" else f"'__fish_seen_subcommand_from {cmd}"
    lines = [line for line in text.splitlines() if cond in line and re.search(r" -[sl] ", line)]

    def has(line, flag, value):
        return re.search(rf" -{flag} {re.escape(value)}( |$)", line)

    for o in opts:
        if o.hidden:
            if any((o.long and has(line, "l", o.long)) or (o.short and has(line, "s", o.short)) for line in lines):
                fail(f"completions/numastor.fish offers the hidden alias {cmd} {o.name()}")
            continue
        mine = [line for line in lines if has(line, "l", o.long)]
        if not mine:
            fail(f"completions/numastor.fish does not offer {cmd} --{o.long}")
            continue
        line = mine[0]
        if o.short and not has(line, "s", o.short):
            fail(f"completions/numastor.fish offers {cmd} --{o.long} without -{o.short}")
        if not o.short and re.search(r" -s \S", line):
            fail(f"completions/numastor.fish offers {cmd} --{o.long} with a short letter its table has not")
        if o.arg in ("required", "word") and o.complete != "none":
            if o.complete in ("files", "dirs") and " -F" not in line:
                fail(f"completions/numastor.fish: {cmd} --{o.long} does not complete file names")
            if o.complete == "words":
                m = re.search(r" -a '([^']*)'", line) or re.search(r" -a (\S+)", line)
                if not m or m.group(1).split() != o.words:
                    fail(f"completions/numastor.fish: {cmd} --{o.long} completes {m.group(1).split() if m else None}, "
                         f"its table {o.words}")
    shown = {o.long for o in opts if not o.hidden}
    for line in lines:
        for w in re.findall(r" -l ([a-z][a-z-]*)", line):
            if w not in shown:
                fail(f"completions/numastor.fish offers {cmd} --{w}, which its table does not show")


# --- across commands ----------------------------------------------------------------------
def check_letters(tables):
    meaning = {}
    for cmd, opts in tables.items():
        for o in opts:
            if o.short and not o.hidden:
                meaning.setdefault(o.short, {}).setdefault(o.long, []).append(cmd)
    for letter, longs in sorted(meaning.items()):
        if len(longs) > 1:
            said = "; ".join(f"--{lng} in {', '.join(cmds)}" for lng, cmds in sorted(longs.items()))
            fail(f"-{letter} means two things: {said}")


# --- the binary ---------------------------------------------------------------------------
def help_problems(numastor, cmd, opts):
    args = [numastor, "--help"] if cmd == "numastor" else [numastor, cmd, "--help"]
    p = subprocess.run(args, capture_output=True, text=True)
    problems = []
    if p.returncode != 0:
        problems.append(f"--help exited {p.returncode}")
    lines = p.stdout.splitlines()
    for line in lines:
        if len(line) > WIDTH:
            problems.append(f"a line of {len(line)} columns: {line!r}")
    opt_lines = [line for line in lines if re.match(r"^  (-[A-Za-z], )?    --|^  -[A-Za-z], --", line)
                 or re.match(r"^      --[a-z]", line)]
    labels = [re.split(r"  +", line.strip())[0] for line in opt_lines]
    want = [o.label().strip() for o in opts if not o.hidden]
    for w in want:
        if w not in labels:
            problems.append(f"--help does not show '{w}'")
    for got in labels:
        if got not in want:
            problems.append(f"--help shows '{got}', which its table does not (or not so)")
    return problems


def check_exit(numastor, cmd):
    args = [numastor, "--no-such-option"] if cmd == "numastor" else [numastor, cmd, "--no-such-option"]
    p = subprocess.run(args, capture_output=True, text=True)
    if p.returncode != 3:
        fail(f"{' '.join(args[1:])} exited {p.returncode}, not 3 (numastor(8): 3 could not run)")


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    numastor, dump = sys.argv[1], sys.argv[2]
    tables, commands = load(dump)
    if sorted(commands) != sorted(c for c in tables if c != "numastor"):
        fail(f"the commands {commands} and the tables {sorted(tables)} differ")
    check_letters(tables)
    for cmd, opts in tables.items():
        check_man(cmd, opts)
        check_bash(cmd, opts)
        check_zsh(cmd, opts)
        check_fish(cmd, opts)
        check_exit(numastor, cmd)
        problems = help_problems(numastor, cmd, opts)
        for p in problems:
            fail(f"{cmd} {p}")
    n = sum(len(v) for v in tables.values())
    print(f"options: {len(tables)} tables, {n} options, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
