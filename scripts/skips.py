#!/usr/bin/env python3
"""Lists the tests CTest skipped, each with its reason, and fails when a skip is not allowed on this machine.

    scripts/skips.py JUNIT ALLOWED BUILD_DIR

JUNIT is `ctest --output-junit`'s file; ALLOWED is tests/skips-allowed.txt, whose lines say which test may skip on
which kind of machine, and why. A test skips by exiting 77 after `SKIP NAME: reason` (tests/integration/lib.sh), or
by printing `SKIP: reason` (a doctest case, SKIP_REGULAR_EXPRESSION); a test CTest did not run at all (a failed
fixture, a disabled test) counts as a skip too. Exit status: 0 when every skip is allowed, 1 when one is not, 2 for
bad input.
"""
import fnmatch
import os
import re
import sys
import xml.etree.ElementTree as ET

# The machines a skip may be allowed on: each condition, and how this machine is checked for it.
CONDITIONS = {
    "no-root": "not run as root (network namespaces, mounts)",
    "no-libtorch": "built without LibTorch (no hpclaunch-train)",
    "no-gloo": "the trainer built against a LibTorch without gloo",
    "one-cpu": "a single CPU",
}

SKIP_LINE = re.compile(r"^(?:SKIP [^:\n]*|SKIP|skip): (.*)$", re.MULTILINE)


def skipped_tests(junit_text):
    """[(test name, reason)] of the tests the JUnit file shows as not run, in its order."""
    skipped = []
    for case in ET.fromstring(junit_text).iter("testcase"):
        marker, status = case.find("skipped"), case.get("status")
        if marker is None and status not in ("notrun", "disabled"):
            continue
        reasons = SKIP_LINE.findall(case.findtext("system-out") or "")
        if reasons:
            why = reasons[-1]
        elif status == "disabled":
            why = "disabled (its DISABLED property)"
        else:
            why = (marker.get("message") if marker is not None else "") or "no reason given"
        skipped.append((case.get("name"), why.strip()))
    return skipped


def allowed_skips(text, where):
    """[(test glob, condition, reason)] from the allow-list's lines `TEST | CONDITION | REASON`; errors raise."""
    entries = []
    for number, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        parts = [p.strip() for p in line.split(" | ")]
        if len(parts) != 3 or not all(parts):
            raise ValueError(f"{where}:{number}: expected 'TEST | CONDITION | REASON', got: {line}")
        if parts[1] not in CONDITIONS:
            raise ValueError(f"{where}:{number}: unknown condition '{parts[1]}'; one of: {', '.join(CONDITIONS)}")
        entries.append(tuple(parts))
    return entries


def machine_conditions(build_dir):
    """The conditions that hold here."""
    held = set()
    if os.geteuid() != 0:
        held.add("no-root")
    train = os.path.join(build_dir, "trainer", "hpclaunch-train")
    if not os.access(train, os.X_OK):
        held.add("no-libtorch")
    else:
        # The compile lines (CMAKE_EXPORT_COMPILE_COMMANDS, whatever the generator): the trainer's gloo path is
        # compiled only where gloo's headers were found.
        commands = os.path.join(build_dir, "compile_commands.json")
        try:
            if "HPCTRAIN_WITH_GLOO" not in open(commands).read():
                held.add("no-gloo")
        except OSError:
            pass
    if (os.cpu_count() or 1) < 2:
        held.add("one-cpu")
    return held


def judge(skipped, entries, held):
    """[(name, reason, allowed, the conditions the allow-list names for it)] for each skipped test."""
    verdicts = []
    for name, reason in skipped:
        named = [cond for glob, cond, _ in entries if fnmatch.fnmatchcase(name, glob)]
        verdicts.append((name, reason, any(cond in held for cond in named), named))
    return verdicts


def main(argv):
    if len(argv) != 4:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    junit, allowed, build_dir = argv[1:]
    try:
        skipped = skipped_tests(open(junit).read())
        entries = allowed_skips(open(allowed).read(), allowed)
    except (OSError, ValueError, ET.ParseError) as e:
        print(f"skips.py: {e}", file=sys.stderr)
        return 2
    held = machine_conditions(build_dir)
    here = ", ".join(sorted(held)) or "none of " + ", ".join(CONDITIONS)
    if not skipped:
        print("skips: no test was skipped")
        return 0
    verdicts = judge(skipped, entries, held)
    print(f"skips: {len(skipped)} test(s) skipped (this machine: {here}):")
    for name, reason, ok, named in verdicts:
        if ok:
            verdict = "allowed here"
        elif named:
            verdict = f"NOT ALLOWED here: {allowed} allows it only on: {', '.join(named)}"
        else:
            verdict = f"NOT ALLOWED: not in {allowed}"
        print(f"  {name}: {reason} [{verdict}]")
    refused = sum(1 for v in verdicts if not v[2])
    if refused:
        print(f"skips: {refused} skip(s) not allowed on this machine: make the test run here, or add it to {allowed} "
              "with the condition under which it cannot run", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
