#!/usr/bin/env python3
"""The command lines README.md and docs/*.md show a user, and what each is marked with (docs/command-lines.md).

doc_commands.py ROOT            one line per command line: FILE:LINE<TAB>MARK<TAB>COMMAND, where MARK is
                                `run` (the harness, t0800, runs it), `run-by tNNNN` (that test takes it from the
                                document and runs it) or `not-runnable` (the document says why); then, on stderr,
                                one line per mistake in the documents (FILE:LINE: what is wrong and the fix), and
                                exit 1 when there was one.
doc_commands.py ROOT --run-by tNNNN    only the commands marked `run by tNNNN`, one a line (for that test to run).

The rule, in short (docs/command-lines.md has it with examples):
- A fenced block tagged sh, bash, shell or console holds command lines: each line (a trailing backslash joins the
  next; in console blocks only the lines after a `$ ` prompt) is one. Every fenced block has a tag: one without
  is a mistake (tag it `text` when it shows output, a diagram or a synopsis).
- An inline code span in prose is a command line when its first word (after NAME=value words) is a program a user
  runs (COMMAND_WORDS below) and it is complete: no placeholder (an all-capitals word such as JOB, CMD, N or FILE;
  `...`; an option list `[...]`; alternatives `a|b`), and more than the program's name with command names and
  bare flags (`hpclaunch agent`, `sbatch --test-only` name things; they are not lines to run).
- Marks: `# not runnable here: WHY` or `# run by tNNNN` in a command line's trailing comment;
  `<!-- not runnable here: WHY -->` or `<!-- run by tNNNN -->` on the line before a block's opening fence (the
  whole block) or right after an inline span.
"""
import os
import re
import shlex
import sys

COMMAND_WORDS = re.compile(
    r"(hpclaunch(-train|-probe)?|cmake|ctest|(\./)?(scripts|build[\w-]*)/\S+|pip3?|python3?|torchrun|srun|sbatch|salloc|"
    r"mpirun|mpiexec|qsub|spack|eb|module|conda|apt-get|source|eval)$")
SHELL_TAGS = {"sh", "bash", "shell", "console"}
MARK = re.compile(r"(not runnable here:\s*(?P<why>\S.*?)|run by (?P<test>t\d{4})\b.*?)\s*(-->)?\s*$")
HTML_MARK = re.compile(r"<!--\s*(not runnable here:\s*(?P<why>\S.*?)|run by (?P<test>t\d{4})\b.*?)\s*-->")
FENCE = re.compile(r"^(\s*)(```+|~~~+)\s*([\w+-]*)")


def documents(root):
    docs = [os.path.join(root, "README.md")]
    d = os.path.join(root, "docs")
    docs += sorted(os.path.join(d, f) for f in os.listdir(d) if f.endswith(".md"))
    return docs


def split_words(text):
    try:
        return shlex.split(text, comments=False)
    except ValueError:
        return text.split()


def has_placeholder(text, words):
    if "..." in text or "\u2026" in text:
        return True
    for w in words:
        if w.startswith("[") or re.search(r"\w\\?\|\w", w) or w.startswith("<") and w.endswith(">"):
            return True
        if w.startswith("-"):
            continue  # a flag; its value after `=` is the program's (OFF, Release), not the reader's
        w = re.sub(r"^[A-Za-z_][A-Za-z0-9_]*=", "", w)  # an environment variable's name is no placeholder
        for part in re.split(r"[/,:*@=]", w):
            if re.fullmatch(r"[A-Z][A-Z0-9_]*", part):
                return True
    return False


def inline_command(span):
    """The span's text when it is a command line by the rule above, else None."""
    text = " ".join(span.split())
    words = split_words(text)
    i = 0
    while i < len(words) and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", words[i]):
        i += 1
    if i >= len(words) or not COMMAND_WORDS.match(words[i]):
        return None
    if has_placeholder(text, words):
        return None
    if i == 0 and all(re.fullmatch(r"[a-z][a-z0-9-]*|--?[a-zA-Z][\w-]*(=\S*)?", w) for w in words[1:]):
        return None  # names a program, a command or a flag (a NAME=value before it makes it a command line)
    return text


def mark_of(match):
    if match is None:
        return None
    return f"run-by {match.group('test')}" if match.group("test") else "not-runnable"


def trailing_comment(line):
    """The comment at the end of a shell line (after an unquoted ` #`), or ''."""
    quote = None
    for i, c in enumerate(line):
        if quote:
            if c == quote:
                quote = None
        elif c in "'\"":
            quote = c
        elif c == "#" and (i == 0 or line[i - 1] in " \t"):
            return line[i:]
    return ""


def scan(path, rel):
    """(line, mark, command) for each command line of one document, and its mistakes."""
    lines = open(path, encoding="utf-8").read().split("\n")
    found, mistakes = [], []
    prose = list(lines)  # the document with its fenced blocks blanked, for the inline spans
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        fence, tag, start = m.group(2), m.group(3).lower(), i + 1
        j = i + 1
        while j < len(lines) and not lines[j].strip().startswith(fence):
            j += 1
        body = lines[i + 1:j]
        for n in range(i, min(j + 1, len(lines))):
            prose[n] = ""
        block_mark = mark_of(HTML_MARK.search(lines[i - 1] if i > 0 else ""))
        if not tag:
            mistakes.append(f"{rel}:{start}: a fenced block without a tag: tag it ```sh when it shows command lines "
                            "(each is then run or marked, docs/command-lines.md), ```text when it shows output, a "
                            "diagram or a synopsis")
        elif tag in SHELL_TAGS:
            k = 0
            while k < len(body):
                first, line = start + 1 + k, body[k]
                if tag == "console":
                    if not line.lstrip().startswith("$ "):
                        k += 1
                        continue
                    line = line.lstrip()[2:]
                parts = [line]
                while parts[-1].rstrip().endswith("\\") and k + 1 < len(body):
                    k += 1
                    parts.append(body[k])
                k += 1
                command = " ".join(p.rstrip().rstrip("\\").strip() for p in parts)
                if not command or command.startswith("#"):
                    continue
                mark = mark_of(MARK.search(trailing_comment(parts[-1]))) or block_mark or "run"
                found.append((first, mark, command))
        i = j + 1
    # Inline spans, paragraph by paragraph (a span may run over a line break, never over a blank line).
    n = 0
    while n < len(prose):
        if not prose[n].strip():
            n += 1
            continue
        first = n
        while n < len(prose) and prose[n].strip():
            n += 1
        text = "\n".join(prose[first:n])
        for m in re.finditer(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)", text, re.S):
            command = inline_command(m.group(2))
            if command is not None:
                line = first + 1 + text.count("\n", 0, m.start())
                mark = mark_of(HTML_MARK.match(text[m.end():m.end() + 300].lstrip()))
                found.append((line, mark or "run", command))
    return found, mistakes


def main(argv):
    root = argv[1]
    run_by = argv[3] if len(argv) > 3 and argv[2] == "--run-by" else None
    all_mistakes = []
    for path in documents(root):
        rel = os.path.relpath(path, root)
        found, mistakes = scan(path, rel)
        all_mistakes += mistakes
        for line, mark, command in found:
            if run_by:
                if mark == f"run-by {run_by}":
                    print(command)
            else:
                print(f"{rel}:{line}\t{mark}\t{command}")
    if run_by:
        return 0
    for m in all_mistakes:
        print(m, file=sys.stderr)
    return 1 if all_mistakes else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
