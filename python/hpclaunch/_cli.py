"""Running the hpclaunch binary: where it is, keywords as its flags, its one-line errors as HpclaunchError."""
import json
import os
import shutil
import subprocess
import threading
import sys

__all__ = ["HpclaunchError", "binary", "run", "run_json", "flags"]

# Where a wheel puts the binary.
_PACKAGED = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin", "hpclaunch")

# Flags that have a --no-NAME form: False passes it (every other False keyword is left out).
_SWITCHES = {"requeue", "preflight", "check", "snapshot"}


class HpclaunchError(Exception):
    """hpclaunch refused or failed: `.exit_code` is its exit status, `.message` its one-line error."""

    def __init__(self, message, exit_code, args=None):
        super().__init__(message)
        self.message = message
        self.exit_code = exit_code
        self.argv = args


def _is_our_wrapper(path):
    # The console script pip writes for this package (it would run us again): a Python script, not the binary.
    try:
        with open(path, "rb") as f:
            head = f.read(512)
    except OSError:
        return False
    return head.startswith(b"#!") and b"hpclaunch" in head and b"python" in head.split(b"\n", 1)[0]


def binary():
    """The hpclaunch executable: the one in this package (a wheel carries it), else $HPCLAUNCH, else PATH."""
    if os.path.isfile(_PACKAGED) and os.access(_PACKAGED, os.X_OK):
        return _PACKAGED
    env = os.environ.get("HPCLAUNCH")
    if env:
        if os.path.isfile(env) and os.access(env, os.X_OK):
            return env
        raise HpclaunchError(f"hpclaunch: error: $HPCLAUNCH is '{env}', which is not an executable file; "
                             "fix: point it at the hpclaunch binary, or unset it", 127)
    found = shutil.which("hpclaunch")
    if found and not _is_our_wrapper(found):
        return found
    raise HpclaunchError("hpclaunch: error: no hpclaunch binary: this package has none (a wheel built from the "
                         "repository carries one), $HPCLAUNCH is unset and none is on PATH; fix: install the wheel "
                         "(docs/python.md, `pip install ./python`), or set HPCLAUNCH=/path/to/hpclaunch", 127)


def flags(options):
    """Keywords as command-line flags: under_score -> --under-score; True -> the flag alone; False/None -> left
    out (--no-NAME for a switch); a list -> the flag repeated; a dict -> NAME=VALUE repeated (env) or, for sweep,
    KEY=V1,V2."""
    out = []
    for key, value in options.items():
        name = "--" + key.replace("_", "-")
        if value is None:
            continue
        if value is True:
            out.append(name)
        elif value is False:
            if key in _SWITCHES:
                out.append("--no-" + key.replace("_", "-"))
        elif isinstance(value, dict):
            for k, v in value.items():
                if isinstance(v, (list, tuple)):
                    v = ",".join(str(x) for x in v)
                out += [name, f"{k}={v}"]
        elif isinstance(value, (list, tuple)):
            for v in value:
                out += [name, str(v)]
        else:
            out += [name, str(value)]
    return out


def _error_line(stderr, rc):
    lines = [l for l in stderr.splitlines() if l.strip()]
    for line in reversed(lines):
        if line.startswith("hpclaunch: error:"):
            return line
    return lines[-1] if lines else f"hpclaunch: error: exited with {rc}"


def run(args, echo=False, stdin=None):
    """Runs `hpclaunch ARGS`; returns (exit code, stdout, stderr). With `echo`, stderr is passed on to ours as it
    comes (a local job's output, wait's progress line) and kept too; `echo` may be a function that takes each
    line instead."""
    argv = [binary()] + [str(a) for a in args]
    if not echo:
        p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, stdin=stdin)
        return p.returncode, p.stdout, p.stderr
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, stdin=stdin)
    kept = []

    out = []
    reader = threading.Thread(target=lambda: out.append(p.stdout.read()), daemon=True)
    reader.start()
    for line in p.stderr:
        kept.append(line)
        if callable(echo):
            echo(line)
        else:
            sys.stderr.write(line)
            sys.stderr.flush()
    reader.join()
    rc = p.wait()
    return rc, out[0] if out else "", "".join(kept)


def check(args, echo=False):
    """Runs `hpclaunch ARGS`; its stdout, or HpclaunchError with its one-line error and exit code."""
    rc, out, err = run(args, echo=echo)
    if rc != 0:
        raise HpclaunchError(_error_line(err, rc), rc, args)
    return out


def run_json_lines(args):
    """Runs `hpclaunch ARGS` that prints one JSON document a line (`status --json JOB...`); returns the documents.
    A non-zero exit raises HpclaunchError."""
    out = check(args)
    try:
        return [json.loads(line) for line in out.splitlines() if line.strip()]
    except ValueError:
        raise HpclaunchError(f"hpclaunch: error: `hpclaunch {' '.join(map(str, args))}` printed a line that is not "
                             f"JSON: {out[-200:]!r}", 1, args) from None


def run_json(args, echo=False, ok_codes=(0,)):
    """Runs `hpclaunch ARGS --json`-style and returns (exit code, document). A non-zero exit without a document
    (or outside ok_codes) raises HpclaunchError."""
    rc, out, err = run(args, echo=echo)
    text = out.strip().splitlines()
    if rc != 0 and (rc not in ok_codes or not text):
        raise HpclaunchError(_error_line(err, rc), rc, args)
    try:
        return rc, json.loads(text[-1])
    except (IndexError, ValueError):
        raise HpclaunchError(f"hpclaunch: error: `hpclaunch {' '.join(map(str, args))}` printed no JSON "
                             f"(exit {rc}): {out[-200:]!r}", rc or 1, args) from None
