"""`python -m hpclaunch._worker CALL_DIR`: the command an Executor job runs on every rank.

It forks: the child reads CALL_DIR/call.pkl (the function and its arguments, pickled with cloudpickle), calls it
with the rendezvous variables the launcher set (RANK, WORLD_SIZE, MASTER_ADDR, ...) and writes the value or the
exception with its traceback to OUT/rank-R.pkl (OUT: CALL_DIR/results, or CALL_DIR/task-I for an array task), mode
0600. The parent passes the launcher's signals on to the child, copies its stdout and stderr to ours and to
OUT/rank-R.out and .err (job.stdout()/stderr()), and, when the child ends without a record (os._exit, a signal, the
OOM killer), writes one naming its exit code or signal and its last lines of output. Exits as the child did.

A Checkpointable call (hpclaunch.Checkpointable) checkpoints on the job's warning signal (SIGUSR1 unless
HPCLAUNCH_CHECKPOINT_SIGNAL says another): rank 0 calls its checkpoint(), writes the call it returns to
OUT/checkpoint.pkl and exits 99, on which the job is requeued (by the Slurm script,
launcher/schedulers/slurm/slurm.sh.mustache, or the local runner, launcher/schedulers/local/backend_job.cc); the
next run calls that instead of call.pkl."""
import collections
import os
import pickle
import signal
import socket
import sys
import threading
import time
import traceback

# hpclaunch-train's "saved, requeue me": the Slurm script and the local runner requeue a launch that exits so.
EXIT_REQUEUE = 99
TAIL_LINES = 20
# What the launcher may send a rank: passed on to the child, which acts on it.
FORWARDED = [signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGUSR1, signal.SIGUSR2, signal.SIGQUIT]


def _write(path, record):
    tmp = f"{path}.tmp-{os.getpid()}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as f:
        pickle.dump(record, f)
    os.replace(tmp, path)


def _where():
    rank = int(os.environ.get("RANK", "0"))
    task = os.environ.get("HPCLAUNCH_ARRAY_TASK")
    node = os.environ.get("HPCLAUNCH_NODENAME", "")
    return rank, task, {"rank": rank, "host": socket.gethostname(), "node": node}


def _out_dir(call_dir, outer, task):
    return os.path.join(call_dir, "results" if task is None or outer.get("calls") is None else f"task-{task}")


def _load_call(outer, task, out_dir):
    """The (fn, args, kwargs) this rank runs: a checkpoint's when an earlier run left one."""
    import cloudpickle  # noqa: F401  (what the pickles refer to)

    checkpoint = os.path.join(out_dir, "checkpoint.pkl")
    if os.path.exists(checkpoint):
        with open(checkpoint, "rb") as f:
            return pickle.load(f)
    if outer.get("calls") is not None:
        return pickle.loads(outer["calls"])[int(task)]
    return pickle.loads(outer["call"])


def _checkpoint_on(sig, fn, args, kwargs, rank, out_dir):
    """On the warning signal, rank 0 saves the call that resumes (fn.checkpoint's) and exits for the requeue; the
    other ranks go on until the launch ends them (exiting first, they would end rank 0 mid-save)."""
    import cloudpickle

    def handler(signum, frame):
        if rank != 0:
            return
        delayed = fn.checkpoint(*args, **kwargs)
        call = (delayed.function, delayed.args, delayed.kwargs) if delayed is not None else (fn, args, kwargs)
        path = os.path.join(out_dir, "checkpoint.pkl")
        tmp = f"{path}.tmp-{os.getpid()}"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(cloudpickle.dumps(call))
        os.replace(tmp, path)
        print(f"hpclaunch: rank 0 checkpointed on signal {signum}; the job requeues", file=sys.stderr, flush=True)
        os._exit(EXIT_REQUEUE)

    signal.signal(sig, handler)


def _child(outer, out_dir, task, where):
    """Runs the call and writes its record; returns the exit status."""
    import cloudpickle

    rank = where["rank"]
    fn, args, kwargs = _load_call(outer, task, out_dir)
    if callable(getattr(fn, "checkpoint", None)):
        name = os.environ.get("HPCLAUNCH_CHECKPOINT_SIGNAL", "USR1")
        _checkpoint_on(getattr(signal, "SIG" + name.upper().replace("SIG", "")), fn, args, kwargs, rank, out_dir)
    record = dict(where)
    try:
        value = fn(*args, **kwargs)
        record.update(ok=True, value=cloudpickle.dumps(value))
    except BaseException as e:  # noqa: B902  (SystemExit and KeyboardInterrupt come back too)
        try:
            exc = cloudpickle.dumps(e)
        except Exception:
            exc = None
        record.update(ok=False, time=time.time(), exception=exc, type=f"{type(e).__module__}.{type(e).__qualname__}",
                      message=str(e), traceback=traceback.format_exc())
    sys.stdout.flush()
    sys.stderr.flush()
    _write(os.path.join(out_dir, f"rank-{rank}.pkl"), record)
    return 0 if record["ok"] else 1


def _pump(fd, target, log_path, tail, lock):
    """Copies what the child writes on `fd` to `target` (our stdout or stderr) and to log_path, keeping the last
    lines in `tail`."""
    partial = b""
    with open(log_path, "ab") as log:
        while True:
            try:
                data = os.read(fd, 65536)
            except InterruptedError:
                continue
            if not data:
                break
            try:
                os.write(target, data)
            except OSError:
                pass  # our output is gone (the launcher ended): the log still gets it
            log.write(data)
            log.flush()
            lines = (partial + data).split(b"\n")
            partial = lines.pop()
            with lock:
                tail.extend(lines)
        if partial:
            with lock:
                tail.append(partial)
    os.close(fd)


def _supervise(pid, pipes, out_dir, rank):
    """Waits for the child, passing signals on; returns (wait status, the last lines of its output, warned)."""
    warned = []

    def forward(signum, frame):
        if signum == signal.SIGUSR1:
            warned.append(signum)
        try:
            os.kill(pid, signum)
        except ProcessLookupError:
            pass

    for sig in FORWARDED:
        signal.signal(sig, forward)
    tail, lock = collections.deque(maxlen=TAIL_LINES), threading.Lock()
    pumps = [threading.Thread(target=_pump, args=(fd, target, os.path.join(out_dir, f"rank-{rank}.{ext}"), tail, lock),
                              daemon=True) for fd, target, ext in ((pipes[0], 1, "out"), (pipes[1], 2, "err"))]
    for t in pumps:
        t.start()
    while True:
        try:
            _, status = os.waitpid(pid, 0)
            break
        except InterruptedError:
            continue
    for t in pumps:  # a grandchild may hold the pipes open: its output is not waited for
        t.join(timeout=2)
    with lock:
        lines = [l.decode("utf-8", "replace") for l in tail]
    return status, lines, bool(warned)


def main(argv):
    call_dir = argv[1]
    with open(os.path.join(call_dir, "call.pkl"), "rb") as f:
        outer = pickle.load(f)  # plain data: the submitter's sys.path and the cloudpickled call
    for entry in outer["sys_path"]:  # so that functions pickled by reference import here as they did there
        if entry not in sys.path:
            sys.path.append(entry)
    rank, task, where = _where()
    out_dir = _out_dir(call_dir, outer, task)
    os.makedirs(out_dir, mode=0o700, exist_ok=True)
    record_path = os.path.join(out_dir, f"rank-{rank}.pkl")
    if os.path.exists(record_path):
        os.unlink(record_path)  # a requeued run's: this run writes its own
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        os.close(out_r)
        os.close(err_r)
        os.dup2(out_w, 1)
        os.dup2(err_w, 2)
        os.close(out_w)
        os.close(err_w)
        # Line by line, as on a terminal: a rank that dies abruptly leaves its last lines for the error.
        sys.stdout.reconfigure(line_buffering=True)
        sys.stderr.reconfigure(line_buffering=True)
        code = 1
        try:
            code = _child(outer, out_dir, task, where)
        except BaseException:  # noqa: B902  (the call could not even be read)
            traceback.print_exc()
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
    os.close(out_w)
    os.close(err_w)
    status, tail, warned = _supervise(pid, (out_r, err_r), out_dir, rank)
    code = os.waitstatus_to_exitcode(status)  # -N: killed by signal N
    if not os.path.exists(record_path) and not (warned or code == EXIT_REQUEUE):
        record = dict(where, ok=False, time=time.time(), crashed=True, output_tail=tail,
                      exit_code=code if code >= 0 else None, signal=-code if code < 0 else None)
        _write(record_path, record)
    if code < 0:  # die of the same signal, so that the launcher sees what the rank saw
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
        return 128 - code
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv))
