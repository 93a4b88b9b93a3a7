// How often agents and the store exchange heartbeats, pure: the interval grows with the number of agents so that
// the store reads a bounded number of heartbeats a second, and stays well inside the heartbeat timeout so that a
// live agent is never taken for a lost one. The store announces it in every heartbeat it sends ("interval_ms");
// the agents' clients send theirs at the interval last announced. Why: bench/agent/RESULTS-scale.md, docs/agent.md.
#pragma once
#include <chrono>
#include <cstddef>

namespace hpclaunch {

// One heartbeat a second each way up to this many agents; past it, N / this many seconds.
inline constexpr size_t k_store_heartbeats_per_second = 2000;
// The interval never exceeds the timeout / this (a live agent may miss this many heartbeats less one).
inline constexpr int k_heartbeats_per_timeout = 3;
inline constexpr std::chrono::milliseconds k_min_heartbeat_interval{1000};

// The interval for a store with `agents` connections and a silence `timeout`, in whole tenths of a second:
// max(1 s, agents / k_store_heartbeats_per_second s), at most max(1 s, timeout / k_heartbeats_per_timeout).
std::chrono::milliseconds heartbeat_interval(size_t agents, std::chrono::milliseconds timeout);

// The interval a client takes from the store's heartbeat: `announced_ms` when it is one the store could have sent
// for this timeout (from 1 s up to the timeout / k_heartbeats_per_timeout, or 1 s), else `current` unchanged.
std::chrono::milliseconds adopt_heartbeat_interval(long long announced_ms, std::chrono::milliseconds timeout,
                                                   std::chrono::milliseconds current);

}  // namespace hpclaunch
