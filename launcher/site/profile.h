// A site profile: everything hpclaunch knows about one system (scheduler, node shape, queues, how GPUs and
// accounts are requested, modules, containers, environment, rendezvous rule). Plain data; the schema is in
// docs/site-profiles.md and the YAML reader in site/profile_yaml.cc.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "site/accelerator.h"  // Accelerator: whose GPUs, and how a rank is given one
#include "site/gpu_styles.h"  // GpuStyle: the registry of GPU request styles
#include "site/job_rules.h"  // GpuBind, MasterAddrRule: a profile picks what the runtime does
#include "site/launchers.h"  // LaunchMode: the registry of launchers
#include "site/schedulers.h"  // Scheduler: the registry of schedulers
#include "util/enum_names.h"

namespace hpclaunch {

enum class QueueKind { partition, qos, queue, automatic };  // automatic: limits only, never requested

// Its names as profiles spell them (util/enum_names.h; a scheduler's, launcher's and GPU style's: their registries,
// site/schedulers.h, launchers.h, gpu_styles.h).
inline const EnumNames<QueueKind> k_queue_kind_names = {
    {"partition", QueueKind::partition}, {"qos", QueueKind::qos}, {"queue", QueueKind::queue},
    {"auto", QueueKind::automatic}};

inline const char* to_string(QueueKind k) { return name_of(k_queue_kind_names, k); }

struct NodeShape {
  int gpus = 0;
  std::string gpu_model;
  int cores = 0;  // physical cores usable by a job on one node
  int threads_per_core = 1;
  int memory_gb = 0;
  std::string arch = "x86_64";
  Accelerator accelerator = Accelerator::nvidia;
};

struct Queue {
  std::string name;
  QueueKind kind = QueueKind::partition;
  long max_time_s = 0;  // 0: no limit known
  int max_nodes = 0;    // 0: no limit known
  int max_gpus = 0;     // GPUs per job, 0: no limit known (Roihu's gpumedium: 4 in all)
  int min_gpus = 0;     // GPUs per job, 0: none (Roihu's gpularge: full nodes)
  bool is_default = false;
  std::string note;
  // Longest time by job size where the queue routes by node count (ALCF Polaris's prod: 10-24 nodes 3 h, 25-99 6 h,
  // 100+ 24 h): {least nodes, max seconds}, ascending; a job takes the last entry its node count reaches.
  std::vector<std::pair<int, long>> max_time_by_nodes;
  // Nodes are shared between jobs (LUMI's small-g and dev-g, Aurora's debug): a binding that names a whole node's
  // CPUs (slurm.whole_node_rank_options, pbs.pals_cpu_bind: the scheduler options its dialect marks whole_node) is not applied.
  bool shared = false;
  // Block topology (Slurm 24.05+, GB200 NVL72 racks): the nodes of a segment, which a job's node count must be a
  // multiple of (`--segment`), and the options its jobs get with it ("--exclusive=topo", 25.11's
  // "--consolidate-segments", "--network=unique-channel-per-segment"); 0: none.
  int segment = 0;
  std::vector<std::string> segment_options;
  int memory_gb = 0;  // PBS: the memory a node of this queue gives jobs, asked as the chunk's mem= (shared nodes,
                      // NCAR Derecho's develop); 0: the job gets whole nodes and asks none
};

// Something a user must know before a job of this site is submitted, said as a warning (Trillium: GPU jobs are
// submitted from the GPU login node; more than 5 nodes need an allocation).
struct Notice {
  std::string text;
  int min_nodes = 0;  // said only for jobs of at least this many nodes; 0: every job
};

struct GpuRequest {
  GpuStyle style = GpuStyle::none;
  std::string type;        // gres/gpus type, e.g. "v100l", "a100"; may be empty
  std::string constraint;  // Slurm -C, e.g. "gpu"
  int max_cpus_per_gpu = 0;  // 0: no site limit
  std::vector<int> gpus_per_node_choices;  // the only GPU counts a node may be asked for (Trillium: 1 or 4); empty: any
};

// One option of a scheduler's own block of a profile (`slurm: {rank_options: [...]}`, `pbs: {chunk_extra: ...}`):
// its values, one for a text. Which keys a scheduler has, and what each may say, its dialect declares
// (SchedulerDialect::profile_options); the profile reader checks them against that with file:line.
struct SchedulerOption {
  std::vector<std::string> values;
  bool list = false;  // written as a list (`[a, b]`), else one text
};
using SchedulerOptions = std::map<std::string, SchedulerOption>;

struct AccountRule {
  bool required = false;
  std::string pattern;  // ECMAScript regex the whole account must match; empty: anything
  std::string example;
  std::string flag = "-A";  // the PBS directive that names it (NCI Gadi: -P)
};

struct Rendezvous {
  MasterAddrRule master_addr = MasterAddrRule::first_node;
  std::string suffix;
  bool resolve = false;
  std::string fixed_addr;
  int port = 0;  // 0: derive from the job id (runtime formula)
};

// How a site runs a container (--container IMAGE): scheduler directives and a wrap of the command (Shifter,
// Apptainer: `apptainer exec {gpu_flag} {image}`, the vendor's --nv or --rocm), or options of the job's srun steps
// (Pyxis: --container-image={image}; CSCS's container engine: --environment={edf}, an EDF file the script writes
// into the job directory from `edf`). In srun_options and edf, {image}, {edf}, {hpclaunch_dir}, {workdir} and
// {job_dir} are replaced: a container that runs the whole step must see hpclaunch and the job's directories.
// A kind of image a site runs differently (CSCS's Alps Extended Images: their own network stack, no NCCL hook): the
// srun options and EDF lines used for an image whose name `match` (a regular expression, searched) finds.
struct ContainerImageForm {
  std::string match;
  std::string about;                      // what these images are, with where the site says so
  std::vector<std::string> srun_options;  // replace the container's own, if given
  std::vector<std::string> edf;           // replace the container's own, if given
};

struct Container {
  std::string runtime;                  // shifter, apptainer, podman-hpc, pyxis, container-engine; empty: none
  std::vector<std::string> directives;  // scheduler directives, "{image}" replaced
  std::vector<std::string> wrap;        // argv put before the command, "{image}" and "{gpu_flag}" replaced
  std::vector<std::string> modules;     // loaded when a container is used
  std::vector<std::string> srun_options;  // options of the srun steps (agent and srun launchers)
  std::vector<std::string> edf;           // the lines of an EDF file (TOML), written to JOBDIR/container.toml
  std::vector<ContainerImageForm> images;  // the first whose match finds the image replaces the two above
  // The container (its hook, or its image) sets the network's variables itself: interconnect.env is not exported in
  // a container job, so that the host's values do not override them (CSCS's container engine, cscs-docs nccl.md).
  bool sets_network_env = false;
};
// The container form for `image`: `c` with the srun options and EDF lines of the first image form whose match finds
// it (a form may give only one of the two).
Container container_for_image(const Container& c, const std::string& image);

// A variable a site's network documents: exported by the script unless the user's environment has it already.
struct NetworkVar {
  std::string name;
  std::string value;
  std::string source;  // where the site says so
};
// A variable the site says must not be set (Alps's uenv: NCCL_NET_PLUGIN): refused in env and --env.
struct ForbiddenVar {
  std::string name;
  std::string reason;  // why, and where the site says so
};
struct Interconnect {
  std::string name;  // slingshot, infiniband, ...: for humans
  // The allreduce bus bandwidth (nccl-tests' busbw, GB/s) a healthy multi-node job reaches on this interconnect,
  // with where it was measured or published; 0: unknown. `submit --preflight` flags a result below half of it.
  int busbw_gbs = 0;
  // The same inside one multi-node NVLink domain (an NVL72 rack, an NVL4 board): `hpclaunch check` measures each
  // domain's ranks together and flags a domain below half of it; the network's figure above is then the one across
  // domains. 0: unknown. One source for both.
  int nvlink_busbw_gbs = 0;
  std::string busbw_source;
  std::vector<NetworkVar> env;
  std::vector<ForbiddenVar> never_set;
};

// How a job asks for memory. A GPU job left to a site's default can get very little (the Alliance: 256 MB per
// core), so every profile says which of these applies.
enum class MemoryStyle {
  unset,       // the profile does not say (a user profile); nothing is requested
  whole_node,  // --mem=0 on jobs that take all of a node's GPUs; a GPU share of node.memory_gb otherwise
  per_gpu,     // --mem-per-gpu=AMOUNT
  by_gpu,      // the site sets memory from the GPUs asked for (Roihu: 217 GiB per GPU): nothing to request
  pbs_chunk,   // PBS: in the select chunk (pbs.chunk_extra)
};
// The names a profile's memory.request takes; "unset" is no value a profile writes.
inline const EnumNames<MemoryStyle> k_memory_style_names = {
    {"whole-node", MemoryStyle::whole_node}, {"per-gpu", MemoryStyle::per_gpu}, {"by-gpu", MemoryStyle::by_gpu},
    {"pbs-chunk", MemoryStyle::pbs_chunk}};
inline const char* to_string(MemoryStyle s) {
  return s == MemoryStyle::unset ? "unset" : name_of(k_memory_style_names, s);
}
struct MemoryRequest {
  MemoryStyle style = MemoryStyle::unset;
  std::string amount;  // per_gpu: "64G"
  // node.memory_gb counts decimal GB (1e9 bytes), as the site charges it (NCSA DeltaAI: "1 GB ... means 1e9
  // bytes"): a share is asked in MiB at or below it, since Slurm's G is 2^30 bytes and would ask more.
  bool decimal_gb = false;
};

// What a job does before its time limit or on preemption (Slurm): ask for a warning signal, checkpoint, requeue.
struct RequeuePolicy {
  bool enabled = false;            // on by default for this site's jobs
  std::string signal = "USR1";     // sent to the batch script (B:) `seconds` before the limit
  int seconds = 120;
  int max_requeues = 3;
  // The agent's --hang-timeout for this site's agent jobs, in seconds (0: not watched; docs/agent.md, "Hangs").
  int hang_timeout = 0;
  // Spare nodes for this site's agent jobs (--spares; docs/agent.md, "Spare nodes").
  int spares = 0;
};

// Where a profile written by `hpclaunch sites learn` came from: the day and the scheduler commands it read.
struct Learned {
  std::string date;
  std::vector<std::string> commands;
};

struct SiteProfile {
  std::string name;
  std::string title;
  std::string status = "active";  // active | retired
  std::string retired_on;
  std::vector<std::string> successors;
  Scheduler scheduler = Scheduler::slurm;
  // The scheduler's release at the site, "24.11" (`sinfo --version`; `sites check` compares): which of its options
  // a job may ask for (--segment needs Slurm 24.05). "": unknown, and such options are rendered as asked.
  std::string scheduler_version;
  NodeShape node;
  std::vector<Queue> queues;
  GpuRequest gpu;
  AccountRule account;
  std::vector<std::string> modules;
  std::vector<std::string> setup;  // shell lines run before the launch (after modules)
  Container container;
  std::vector<std::pair<std::string, std::string>> env;
  LaunchMode default_launcher = LaunchMode::srun;
  std::vector<LaunchMode> launchers;
  GpuBind gpu_bind = GpuBind::none;
  Rendezvous rendezvous;
  RequeuePolicy requeue;
  std::vector<std::string> scratch;     // names of scratch variables the site sets
  // Where `--remote SITE` connects: [USER@]HOST[:PORT] of a login node (docs/remote.md); "": none named.
  std::string login_host;
  bool scratch_only = false;            // compute nodes write only under scratch (the first `scratch` variable)
  std::vector<std::string> mpirun_modules;  // loaded too when the launcher is mpirun (Trillium: StdEnv, openmpi)
  std::vector<std::string> directives;  // extra scheduler directives, e.g. "--mem=0"
  // Directives made from the job's account, "{account}" replaced (NCI Gadi: -l storage=scratch/{account}+...);
  // one whose option (the text up to '=') a `directives` entry also sets is left out, so a site file changes it.
  std::vector<std::string> account_directives;
  std::vector<Notice> notices;
  bool arrays = true;  // the site accepts its scheduler's job arrays; false (NCI Gadi): one job per task instead
  std::vector<std::string> sources;     // where the facts come from
  std::vector<std::string> unverified;  // facts not confirmed against the site's documentation
  MemoryRequest memory;
  std::optional<Learned> learned;       // set on profiles written by `sites learn`
  bool submit_check = false;            // `submit` asks the scheduler to validate the script first (--check)
  // `submit` copies the code into the job directory and runs it there (--snapshot); what it leaves out beside
  // .gitignore (gitignore patterns), and the largest copy it makes ("": 256M).
  bool snapshot = false;
  std::vector<std::string> snapshot_exclude;
  std::string snapshot_max_size;
  Interconnect interconnect;
  // The scheduler's own options: the block named after it (Slurm's rank_options, PBS's chunk_extra and
  // pals_cpu_bind; launcher/schedulers/NAME/README.md). A plan may leave out those that name a whole node's CPUs.
  SchedulerOptions scheduler_options;
  std::string file;                     // the file it was read from (for messages)

  bool retired() const { return status == "retired"; }
  bool allows(LaunchMode m) const;
  // The values of the scheduler's option `key` (empty when not given), and its one text ("" when not given).
  std::vector<std::string> scheduler_option(const std::string& key) const;
  std::string scheduler_text(const std::string& key) const;
  const Queue* find_queue(const std::string& name) const;
  const Queue* default_queue() const;
};

}  // namespace hpclaunch
