"""The API and every --json schema against the real binary on the local site (no scheduler: jobs run here)."""
import json
import os
import re
import stat

import pytest
from conftest import SOURCE_DIR, cli, cli_json

import hpclaunch

STATE_KEYS = {"phase", "description", "raw", "reason", "exit_code", "finished"}


def test_submit_runs_a_local_job_and_the_job_answers(workdir):
    # The agent launch: its workers' lines carry [host:RANK], which logs(rank=) picks.
    job = hpclaunch.submit(["sh", "-c", 'echo "hello from $RANK of $WORLD_SIZE"'], site="local", nodes=2,
                           gpus_per_node=2)
    assert job.id.startswith("local-")
    assert os.path.isdir(job.dir) and job.dir.startswith(str(workdir))
    assert job.wait() == "completed"  # submit returned at once (--detach): the job ran in the background
    assert job.state() == "completed"
    assert job.plan["world_size"] == 4
    out = job.logs()
    for r in range(4):
        assert f"hello from {r} of 4" in out
    assert "hello from 2 of 4" in job.logs(rank=2)
    assert "hello from 1 of 4" not in job.logs(rank=2)
    # Found again from its id and from its directory.
    for ref in (job.id, job.dir):
        again = hpclaunch.Job(ref)
        assert (again.id, again.dir) == (job.id, job.dir)
    listed = [j for j in hpclaunch.jobs() if j["job"]["job_id"] == job.id]
    assert len(listed) == 1 and listed[0]["state"]["phase"] == "completed"


def test_a_failed_local_job_is_a_job_not_an_error(workdir):
    job = hpclaunch.submit("sh -c 'exit 3'", site="local", nodes=1, gpus_per_node=1, launcher="srun")
    assert job.wait() == "failed"
    assert job.state() == "failed"
    assert job.status()["state"]["exit_code"] == 3


def test_metrics_and_plot(workdir):
    lines = "\n".join(json.dumps({"step": s, "loss": 1.0 / (s + 1)}) for s in range(5))
    job = hpclaunch.submit(["sh", "-c", f"printf '%s\\n' '{lines}' > \"$HPCLAUNCH_JOB_DIR/metrics.jsonl\""],
                           site="local", nodes=1, gpus_per_node=1, launcher="srun", detach=False)
    rows = job.metrics()
    assert [r["step"] for r in rows] == [0, 1, 2, 3, 4]
    assert rows[1]["loss"] == 0.5
    path = job.plot(workdir / "curves.png")
    with open(path, "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"


def test_cancel_a_running_local_job(workdir):
    # A local job runs in the foreground of its submit: start one in the background, cancel it from here.
    import subprocess
    import time

    p = subprocess.Popen([hpclaunch.binary(), "submit", "--json", "--site", "local", "--nodes", "1", "--gpus-per-node",
                          "1", "--launcher", "srun", "--", "sleep", "300"], stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True)
    job = None
    for _ in range(600):
        listed = hpclaunch.jobs()
        if listed and listed[0]["state"] and listed[0]["state"]["phase"] == "running":
            job = hpclaunch.Job(listed[0]["dir"])
            break
        time.sleep(0.1)
    assert job is not None, "the local job never showed as running"
    job.cancel()
    doc = json.loads(p.communicate(timeout=60)[0].splitlines()[-1])
    assert doc["schema"] == "hpclaunch.submit/1" and doc["exit_code"] != 0
    assert job.wait() in ("cancelled", "failed")


def test_render_and_dry_run(workdir):
    script = hpclaunch.render("python train.py", site="perlmutter", nodes=2, account="m1234_g")
    assert "#SBATCH --nodes=2" in script and "#SBATCH --account=m1234_g" in script
    dry = hpclaunch.submit("python train.py", site="perlmutter", nodes=2, account="m1234_g", dry_run=True)
    # The job directory is named by the second it is planned in (train-YYYYMMDD-HHMMSS): the two calls may straddle
    # one (a cold CI run), so that name alone may differ.
    stamp = re.compile(r"train-\d{8}-\d{6}")
    assert stamp.search(script) and stamp.sub("train-TIME", dry) == stamp.sub("train-TIME", script)
    assert not os.path.exists("hpclaunch-jobs"), "a dry run wrote a job directory"


def test_unknown_keyword_gets_the_cli_message_and_exit_code(workdir):
    with pytest.raises(hpclaunch.HpclaunchError) as e:
        hpclaunch.render("python train.py", site="perlmutter", nodes=2, acount="m1234_g")
    p = cli("render", "--site", "perlmutter", "--nodes", "2", "--acount", "m1234_g", "--", "python", "train.py",
            check=False)
    assert e.value.exit_code == p.returncode == 2
    assert e.value.message == p.stderr.strip().splitlines()[-1]
    assert "--acount" in e.value.message and "--account" in e.value.message  # the did-you-mean


def test_bad_values_get_the_cli_message_and_exit_code(workdir):
    for kwargs, flag in ((dict(site="perlmuter"), "perlmutter"), (dict(site="perlmutter", time="1-99:99"), "--time"),
                         (dict(site="perlmutter", nodes=0), "--nodes")):
        with pytest.raises(hpclaunch.HpclaunchError) as e:
            hpclaunch.submit("python train.py", account="m1234_g", **kwargs)
        assert e.value.exit_code == 2, (kwargs, e.value.message)
        assert e.value.message.startswith("hpclaunch: error:") and flag in e.value.message, (kwargs, e.value.message)
    assert not os.path.exists("hpclaunch-jobs") or not os.listdir("hpclaunch-jobs")
    with pytest.raises(hpclaunch.HpclaunchError) as e:
        hpclaunch.Job("no-such-job")
    assert e.value.exit_code == cli("status", "no-such-job", check=False).returncode != 0


def test_python_dash_m_is_the_cli(workdir):
    import subprocess
    import sys

    p = subprocess.run([sys.executable, "-m", "hpclaunch", "--version"], capture_output=True, text=True,
                       env=dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(hpclaunch.__file__))))
    assert p.returncode == 0 and p.stdout.startswith("hpclaunch 0.")
    p = subprocess.run([sys.executable, "-m", "hpclaunch", "nosuch"], capture_output=True, text=True,
                       env=dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(hpclaunch.__file__))))
    assert p.returncode == 2 and "unknown command 'nosuch'" in p.stderr


def test_missing_binary_says_how_to_get_one(workdir, monkeypatch):
    import hpclaunch._cli as c

    monkeypatch.setattr(c, "_PACKAGED", str(workdir / "no-wheel" / "hpclaunch"))
    monkeypatch.setenv("HPCLAUNCH", str(workdir / "nothing"))
    with pytest.raises(hpclaunch.HpclaunchError) as e:
        hpclaunch.sites()
    assert "$HPCLAUNCH" in e.value.message and "fix:" in e.value.message
    monkeypatch.delenv("HPCLAUNCH")
    monkeypatch.setenv("PATH", str(workdir))
    with pytest.raises(hpclaunch.HpclaunchError) as e:
        hpclaunch.sites()
    assert "pip install ./python" in e.value.message and e.value.exit_code == 127


# Every --json schema: one line on stdout, the schema field, the fields docs/json.md names.

def test_json_submit_and_render(workdir):
    sub = cli_json("submit", "--json", "--site", "local", "--nodes", "2", "--gpus-per-node", "2", "--", "echo", "hi")
    assert sub["schema"] == "hpclaunch.submit/1"
    assert set(sub["job"]) >= {"job_id", "scheduler", "site", "job_dir", "submitted_at", "nodes", "after"}
    assert sub["job"]["scheduler"] == "local" and sub["job"]["nodes"] == 2
    assert sub["script"] == os.path.join(sub["job"]["job_dir"], "job.sh") and os.path.isfile(sub["script"])
    with open(os.path.join(sub["job"]["job_dir"], "plan.json")) as f:
        assert sub["plan"] == json.load(f)  # plan.json's record, the same
    assert sub["plan"]["world_size"] == 4 and sub["plan"]["launcher"] == "agent"
    assert 20000 <= sub["rendezvous_port"] < 30000 and sub["exit_code"] == 0
    r = cli_json("render", "--json", "--site", "perlmutter", "--nodes", "2", "-A", "m1234_g", "--", "python", "t.py")
    assert r["schema"] == "hpclaunch.render/1" and "#SBATCH --nodes=2" in r["script_text"]
    assert r["plan"]["nodes"] == 2 and r["plan"]["ntasks_per_node"] == 4 and r["plan"]["world_size"] == 8
    assert cli_json("submit", "--dry-run", "--json", "--site", "perlmutter", "-A", "m1234_g", "--", "x")["schema"] == \
        "hpclaunch.render/1"


def test_json_jobs_status_wait(workdir):
    sub = cli_json("submit", "--json", "--site", "local", "--array", "2", "--", "echo", "{task}")
    jid = sub["job"]["job_id"]
    jobs = cli_json("jobs", "--json")
    assert jobs["schema"] == "hpclaunch.jobs/1" and len(jobs["jobs"]) == 1
    row = jobs["jobs"][0]
    assert row["job"]["job_id"] == jid and row["array_tasks"] == 2 and set(row["state"]) == STATE_KEYS
    status = cli_json("status", "--json", jid)
    assert status["schema"] == "hpclaunch.status/1" and set(status["state"]) == STATE_KEYS
    assert [t["job_id"] for t in status["tasks"]] == [f"{jid}_0", f"{jid}_1"]
    assert status["state"]["phase"] == "completed" and status["metrics_file"].endswith("metrics.jsonl")
    wait = cli_json("wait", "--json", jid)
    assert wait["schema"] == "hpclaunch.wait/1" and wait["exit_code"] == 0 and wait["state"]["finished"]
    gone = workdir / "gone"
    cli("submit", "--site", "local", "--job-dir", str(gone), "--", "true")
    os.rename(gone, workdir / "moved")
    rows = cli_json("jobs", "--json")["jobs"]
    assert rows[1]["dir_exists"] is False and rows[1]["state"] is None and rows[1]["note"] == "(job directory gone)"


def test_json_errors_stay_one_line_on_stderr(workdir):
    for args, code in ((["status", "--json", "nosuch"], 2), (["wait", "--json", "nosuch"], 2),
                       (["render", "--json", "--site", "nosuch", "--", "x"], 2)):
        p = cli(*args, check=False)
        plain = cli(*[a for a in args if a != "--json"], check=False)
        assert p.returncode == plain.returncode == code, args
        assert p.stdout == "" and p.stderr == plain.stderr and len(p.stderr.splitlines()) == 1, (args, p.stderr)
    sub = cli_json("submit", "--json", "--site", "local", "--", "sleep", "0")
    p = cli("wait", "--json", sub["job"]["job_id"], "--timeout", "0.01", check=False)
    assert p.returncode == 0 or p.returncode == 124  # ended already, or the timeout error


def test_json_sites(workdir):
    sites = cli_json("sites", "--json")
    assert sites["schema"] == "hpclaunch.sites/1"
    by_name = {s["name"]: s for s in sites["sites"]}
    assert by_name["perlmutter"]["scheduler"] == "slurm" and by_name["perlmutter"]["gpus_per_node"] == 4
    assert by_name["polaris"]["scheduler"] == "pbs"
    assert hpclaunch.sites() == sites["sites"]
    show = cli_json("sites", "show", "perlmutter", "--json")
    assert show["schema"] == "hpclaunch.site/1" and show["profile"]["name"] == "perlmutter"
    assert show["profile"]["node"]["gpus"] == 4 and show["profile"]["scheduler"] == "slurm"
    assert hpclaunch.site("perlmutter") == show["profile"]


def test_the_commands_docs_json_shows(workdir):
    # docs/json.md's ```sh block, line by line (each must print one JSON document).
    import re
    import subprocess

    with open(os.path.join(SOURCE_DIR, "docs", "json.md")) as f:
        block = re.search(r"```sh\n(.*?)```", f.read(), re.S).group(1)
    lines = [l for l in block.splitlines() if l.strip()]
    assert len(lines) == 3
    env = dict(os.environ, PATH=os.path.dirname(hpclaunch.binary()) + os.pathsep + os.environ["PATH"])
    for line in lines:
        p = subprocess.run(["bash", "-c", "set -o pipefail; " + line],
                           capture_output=True, text=True, env=env)
        assert p.returncode == 0, (line, p.stderr)
        assert json.loads(p.stdout)["schema"].startswith("hpclaunch.")


def test_json_logs_cancel_version(workdir):
    sub = cli_json("submit", "--json", "--site", "local", "--nodes", "1", "--gpus-per-node", "2", "--launcher", "agent",
                   "--", "sh", "-c", 'echo "out of $RANK"')
    jid = sub["job"]["job_id"]
    logs = cli_json("logs", "--json", jid)
    assert logs["schema"] == "hpclaunch.logs/1" and logs["job_id"] == jid and logs["rank"] is None
    assert logs["file"].endswith("output.log") and "out of 0" in logs["text"] and "out of 1" in logs["text"]
    one = cli_json("logs", "--json", "--rank", "1", jid)
    assert one["rank"] == 1 and "out of 1" in one["text"] and "out of 0" not in one["text"]
    assert cli("logs", "--rank", "1", jid).stdout == one["text"]  # the same lines as without --json
    p = cli("logs", "--json", "--follow", jid, check=False)
    assert p.returncode == 2 and "--follow" in p.stderr and p.stdout == ""
    arr = cli_json("submit", "--json", "--site", "local", "--array", "2", "--", "echo", "task {task}")
    logs = cli_json("logs", "--json", arr["job"]["job_id"])
    assert [t["task"] for t in logs["tasks"]] == [0, 1] and "task 1" in logs["tasks"][1]["text"]
    running = cli_json("submit", "--json", "--detach", "--site", "local", "--", "sleep", "300")
    cancel = cli_json("cancel", "--json", running["job"]["job_id"])
    assert cancel["schema"] == "hpclaunch.cancel/1" and cancel["job_id"] == running["job"]["job_id"]
    assert cancel["what"] == "job" and cancel["scheduler"] == "local"
    version = cli_json("--version", "--json")
    assert version["schema"] == "hpclaunch.version/1" and version["version"] == hpclaunch.__version__
    assert cli("--version").stdout == f"hpclaunch {version['version']} (commit {version['commit']})\n"


def test_submitted_at_has_a_time_zone(workdir):
    import datetime

    sub = cli_json("submit", "--json", "--site", "local", "--", "true")
    at = datetime.datetime.fromisoformat(sub["job"]["submitted_at"])
    assert at.tzinfo is not None, sub["job"]["submitted_at"]
    now = datetime.datetime.now(datetime.timezone.utc)
    assert abs((now - at).total_seconds()) < 3600  # the same moment, whatever the zone


def test_wait_counts_the_steps_of_a_users_own_log(workdir):
    # {"step": N, "loss": ...} without "type", as most training scripts log: wait's line shows the step.
    lines = "\n".join(json.dumps({"step": s, "loss": 0.5}) for s in (1, 2, 3))
    job = hpclaunch.submit(["sh", "-c", f"printf '%s\\n' '{lines}' > \"$HPCLAUNCH_JOB_DIR/metrics.jsonl\""],
                           site="local", launcher="srun")
    job.wait()
    p = cli("wait", job.id)
    assert "step 3 loss 0.5" in p.stdout + p.stderr, p.stdout + p.stderr


def test_submit_detaches_on_the_local_site(workdir):
    import time

    # The CLI's --detach: submit returns while the job runs; its output goes to the job directory only.
    p = cli("submit", "--detach", "--site", "local", "--", "sh", "-c", "echo the-jobs-own-line; sleep 300")
    jid = p.stdout.strip()
    job = hpclaunch.Job(jid)
    assert job.state() == "running"
    assert "the-jobs-own-line" not in p.stdout + p.stderr
    for _ in range(600):  # its output reaches the job directory, not the submit's
        if "the-jobs-own-line" in job.logs():
            break
        time.sleep(0.1)
    assert "the-jobs-own-line" in job.logs()
    job.cancel()
    assert job.wait() == "cancelled"
    assert "--detach" in cli("submit", "--help").stdout
