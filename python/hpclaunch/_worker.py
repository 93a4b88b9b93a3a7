"""`python -m hpclaunch._worker CALL_DIR`: the command an Executor job runs on every rank. Reads CALL_DIR/call.pkl
(the function and its arguments, pickled with cloudpickle), calls it with the rendezvous variables the launcher set
(RANK, WORLD_SIZE, MASTER_ADDR, ...), and writes the value or the exception with its traceback to
CALL_DIR/results/rank-R.pkl (an array task: CALL_DIR/task-I/rank-R.pkl), mode 0600. Exits 1 when the call raised."""
import os
import pickle
import socket
import sys
import time
import traceback


def _write(path, record):
    tmp = f"{path}.tmp-{os.getpid()}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as f:
        pickle.dump(record, f)
    os.replace(tmp, path)


def main(argv):
    call_dir = argv[1]
    with open(os.path.join(call_dir, "call.pkl"), "rb") as f:
        outer = pickle.load(f)  # plain data: the submitter's sys.path and the cloudpickled call
    for entry in outer["sys_path"]:  # so that functions pickled by reference import here as they did there
        if entry not in sys.path:
            sys.path.append(entry)
    import cloudpickle  # noqa: F401  (what the call's pickle refers to)

    fn, args, kwargs = pickle.loads(outer["call"])
    rank = int(os.environ.get("RANK", "0"))
    task = os.environ.get("HPCLAUNCH_ARRAY_TASK")
    if outer.get("items") is not None:
        args = (pickle.loads(outer["items"])[int(task)],) + tuple(args)
    out_dir = os.path.join(call_dir, "results" if task is None or outer.get("items") is None else f"task-{task}")
    os.makedirs(out_dir, mode=0o700, exist_ok=True)
    host = socket.gethostname()
    node = os.environ.get("SLURMD_NODENAME") or os.environ.get("HPCLAUNCH_NODE_NAME") or ""
    record = {"rank": rank, "host": host, "node": node}
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
    _write(os.path.join(out_dir, f"rank-{rank}.pkl"), record)
    return 0 if record["ok"] else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
