#include <doctest/doctest.h>

#include "agent/stack_text.h"

namespace agent_stack_text_test {  // this file's names, apart from its unity batch's others

using namespace hpclaunch;

// py-spy 0.4.3's `dump --nonblocking --full-filenames` of a worker blocked in its loader (recorded here).
const char* k_py_spy = R"(Process 8414: /opt/venv/bin/python3 /home/u/train.py
Python v3.11.7 (/usr/bin/python3.11)

Thread 8414 (idle): "MainThread"
    wait (/usr/lib/python3.11/threading.py:327)
    get (/opt/venv/lib/python3.11/site-packages/torch/utils/data/dataloader.py:1133)
    <lambda> (<string>:1)
    train (/home/u/train.py:57)
    <module> (/home/u/train.py:80)
Thread 8420 (idle): "pin_memory"
    select (/home/u/other.py:1)
)";

TEST_CASE("stack text: py-spy's innermost frame of the main thread, the user's") {
  auto f = innermost_python_frame(k_py_spy);
  REQUIRE(f);
  CHECK(f->function == "train");
  CHECK(f->file == "/home/u/train.py");
  CHECK(f->line == 57);
  CHECK_FALSE(f->library);
  CHECK(frame_words(*f, "batch = next(loader)") == "train.py:57 `batch = next(loader)`");
  CHECK(frame_words(*f, "") == "train.py:57 (train)");
}

TEST_CASE("stack text: a main thread wholly in library code gives its innermost frame") {
  auto f = innermost_python_frame("Thread 1 (idle): \"MainThread\"\n    wait (/usr/lib/python3.11/threading.py:327)\n");
  REQUIRE(f);
  CHECK(f->function == "wait");
  CHECK(f->library);
  CHECK_FALSE(innermost_python_frame("Error: failed to open process 1: Permission denied\n"));
  CHECK_FALSE(innermost_python_frame(""));
}

// gdb 13's `thread apply all bt` of a native worker: threads listed last-made first, thread 1 last.
const char* k_gdb = R"(
Thread 2 (Thread 0x7f00 (LWP 9001) "gloo"):
#0  0x00007f7de5a91e96 in epoll_wait () from /lib/x86_64-linux-gnu/libc.so.6
#1  0x0000555555 in gloo::transport::Loop::run () at gloo/loop.cc:10

Thread 1 (Thread 0x7f01 (LWP 9000) "hpclaunch-train"):
#0  0x00007f7de5a91e96 in __futex_abstimed_wait_common64 (private=0, cancel=true) from /lib/x86_64-linux-gnu/libc.so.6
#1  0x00007f7de5a91e96 in std::condition_variable::wait(std::unique_lock<std::mutex>&) () from /lib/libstdc++.so.6
#2  __futex_abstimed_wait_common (futex_word=0x1) at ./nptl/futex-internal.c:87
#3  0x00005567d92a50ba in std::this_thread::sleep_for<long, std::ratio<1l, 1000l> > () at /usr/include/c++/12/bits/this_thread_sleep.h:80
#4  0x000055555 in hpctrain::Trainer::step (this=0x1) at /src/trainer/ddp.cc:120
#5  0x000055555 in main (argc=1, argv=0x2) at /src/trainer/main.cc:33
[Inferior 1 (process 9000) detached]
)";

TEST_CASE("stack text: gdb's innermost frame of thread 1 with a source line") {
  auto f = innermost_native_frame(k_gdb);
  REQUIRE(f);
  CHECK(f->function == "hpctrain::Trainer::step");
  CHECK(f->file == "/src/trainer/ddp.cc");
  CHECK(f->line == 120);
  CHECK(frame_words(*f, "") == "ddp.cc:120 (hpctrain::Trainer::step)");
  auto bare = innermost_native_frame("#0  0x00007f in nanosleep () from /lib/libc.so.6\n#1  0x0000 in main ()\n");
  REQUIRE(bare);
  CHECK(bare->function == "nanosleep");
  CHECK(bare->library);
  CHECK(frame_words(*bare, "") == "nanosleep (libc.so.6)");
  CHECK_FALSE(innermost_native_frame("ptrace: Operation not permitted.\n"));
}

TEST_CASE("stack text: /proc/PID/stat with a name of spaces and parentheses") {
  auto s = parse_proc_stat("4242 (python3 (x) y) T 4000 4242 4000 0 -1 4194560 ...");
  REQUIRE(s);
  CHECK(s->comm == "python3 (x) y");
  CHECK(s->state == 'T');
  CHECK(s->ppid == 4000);
  CHECK(s->pgrp == 4242);
  CHECK(state_words('T') == "stopped (SIGSTOP or a debugger)");
  CHECK(state_words('D') == "in uninterruptible wait (I/O)");
  CHECK_FALSE(parse_proc_stat("garbage"));
  CHECK_FALSE(parse_proc_stat("1 (x) SS 1 1"));
}

}  // namespace agent_stack_text_test

namespace agent_stack_text_test {

TEST_CASE("stack text: a main thread in a collective or in backward waits for its peers; in a loader it does not") {
  CHECK_FALSE(waits_for_peers(k_py_spy));  // in its loader (another thread's select is not the main one)
  CHECK(waits_for_peers("Thread 1 (idle): \"MainThread\"\n"
                        "    all_reduce (/v/site-packages/torch/distributed/distributed_c10d.py:2900)\n"
                        "    main (/home/u/train.py:40)\n"));
  CHECK(waits_for_peers("Thread 1 (idle): \"MainThread\"\n"
                        "    _engine_run_backward (/v/site-packages/torch/autograd/graph.py:841)\n"));
  // @record's wrapper is torch.distributed's too, but no collective
  CHECK_FALSE(waits_for_peers("Thread 1 (idle): \"MainThread\"\n    main (/home/u/train.py:39)\n"
                              "    wrapper (/v/site-packages/torch/distributed/elastic/multiprocessing/errors/__init__.py:384)\n"));
  CHECK(waits_for_peers("Thread 1 (Thread 0x7f (LWP 9) \"t\"):\n#0  0x1 in c10d::ProcessGroupGloo::AsyncWork::wait () from /l.so\n"));
  CHECK_FALSE(waits_for_peers(k_gdb));  // thread 2's gloo loop is not the main thread
  CHECK_FALSE(waits_for_peers(""));
}

}  // namespace agent_stack_text_test

namespace agent_stack_text_test {

// elfutils 0.188's `eu-stack -p PID -s -i` of a stopped hpclaunch-train (recorded here, shortened).
const char* k_eu_stack = R"(PID 30385 - process
TID 30385:
#0  0x00007fbe434ed545 __GI___clock_nanosleep
    ../sysdeps/unix/sysv/linux/clock_nanosleep.c:48:7
#2  0x000055e314c860ba void std::this_thread::sleep_for<long, std::ratio<1l, 1000l> >(std::chrono::duration<long, std::ratio<1l, 1000l> > const&)
    /usr/include/c++/12/bits/this_thread_sleep.h:80:20
#3  0x000055e314c860ba step
    /work/main/trainer/loop.cc:213:63
#4  0x000055e314c860ba run
    /work/main/trainer/loop.cc:154:18
TID 30386:
#0  0x00007fbe43522ef3 epoll_wait - /usr/lib/x86_64-linux-gnu/libc.so.6
#1  0x00007fbe41c1decf gloo::transport::tcp::Loop::run() - /lib/libgloo.so.0
)";

TEST_CASE("stack text: eu-stack's innermost frame of the main thread in the program's own source") {
  auto f = innermost_native_frame(k_eu_stack);
  REQUIRE(f);
  CHECK(f->function == "step");
  CHECK(f->file == "/work/main/trainer/loop.cc");
  CHECK(f->line == 213);
  CHECK_FALSE(waits_for_peers(k_eu_stack));  // the gloo loop is another thread's
  auto bare = innermost_native_frame("TID 7:\n#0  0x00007f epoll_wait - /usr/lib/libc.so.6\n");
  REQUIRE(bare);
  CHECK(bare->function == "epoll_wait");
  CHECK(bare->library);
  CHECK(waits_for_peers("TID 7:\n#0  0x1 c10d::ProcessGroupGloo::AsyncWork::wait() - /l.so\n"));
}

}  // namespace agent_stack_text_test
