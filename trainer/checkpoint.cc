// Checkpoint format and atomic save: see checkpoint.h.
#include "checkpoint.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iterator>

#include <caffe2/serialize/inline_container.h>
#include <nlohmann/json.hpp>
#include <torch/csrc/jit/serialization/export.h>
#include <torch/csrc/jit/serialization/pickler.h>

#include "atomic_file.h"
#include "trainer.h"  // inspect_checkpoint, compare_checkpoints
#include "util/error.h"

namespace hpctrain {
namespace {

using hpclaunch::Error;
using GenericDict = c10::impl::GenericDict;

constexpr const char* k_format = "hpclaunch-train-checkpoint-1";

c10::Dict<std::string, torch::Tensor> model_state_dict(torch::nn::Module& model, const std::string& prefix) {
  c10::Dict<std::string, torch::Tensor> state;
  for (const auto& item : model.named_parameters()) state.insert(prefix + item.key(), item.value().detach().cpu());
  for (const auto& item : model.named_buffers()) state.insert(prefix + item.key(), item.value().detach().cpu());
  return state;
}

torch::Tensor bytes_tensor(const std::vector<char>& bytes) {
  return torch::from_blob(const_cast<char*>(bytes.data()), {static_cast<int64_t>(bytes.size())}, torch::kUInt8)
      .clone();
}

std::vector<char> read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path, "cannot open the checkpoint", "check --resume-from / --checkpoint-dir");
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// torch::pickle_save's archive (what Python's torch.save writes: data.pkl and a record per tensor) without the type
// tags pickle_save wraps every dict and list in (`torch.jit._pickle.restore_type_tag`): Python's torch.load, from
// PyTorch 2.6 on weights_only=True by default, refuses that global. Untagged, a dict reads back as one of Any to
// Any, which is all read_checkpoint asks of it; 1.13 and 2.6 read it either way (t0507, and t0513 in torch 2.6).
std::vector<char> pickle_save_untagged(const torch::IValue& value) {
  std::vector<char> pickle;
  torch::jit::Pickler pickler([&](const char* buf, size_t size) { pickle.insert(pickle.end(), buf, buf + size); },
                              /*tensor_table=*/nullptr, /*type_renamer=*/nullptr, /*memoized_class_types=*/nullptr,
                              /*get_tensor_id=*/nullptr, /*tag_aggregates=*/false);
  pickler.protocol();
  pickler.pushIValue(value);
  pickler.stop();
  std::vector<char> out;
  caffe2::serialize::PyTorchStreamWriter writer([&](const void* data, size_t size) {
    const char* p = static_cast<const char*>(data);
    out.insert(out.end(), p, p + size);
    return size;
  });
  torch::jit::writeArchiveAndTensors("data", pickle.data(), pickle.size(), pickler.tensorData(), writer);
  writer.writeEndOfFile();
  return out;
}

int64_t int_or(const GenericDict& d, const char* key, int64_t fallback) {
  return d.contains(key) ? d.at(key).toInt() : fallback;
}

}  // namespace

std::string strip_module_prefix(const std::string& name) {
  static const std::string prefix = "module.";
  return name.compare(0, prefix.size(), prefix) == 0 ? name.substr(prefix.size()) : name;
}

void save_checkpoint(const std::string& path, torch::nn::Module& model, torch::optim::Optimizer& optimizer,
                     const TrainState& s) {
  std::vector<char> optimizer_bytes;
  {
    torch::serialize::OutputArchive archive;
    optimizer.save(archive);
    archive.save_to([&](const void* data, size_t size) {
      const char* p = static_cast<const char*>(data);
      optimizer_bytes.insert(optimizer_bytes.end(), p, p + size);
      return size;
    });
  }
  GenericDict d(c10::StringType::get(), c10::AnyType::get());
  d.insert("format", std::string(k_format));
  d.insert("model", s.model);
  d.insert("model_state", model_state_dict(model, ""));
  d.insert("optimizer", s.optimizer);
  d.insert("optimizer_archive", bytes_tensor(optimizer_bytes));
  d.insert("epoch", s.epoch);
  d.insert("next_batch", s.next_batch);
  d.insert("global_step", s.global_step);
  d.insert("global_batch", s.global_batch);
  d.insert("world_size", s.world_size);
  d.insert("seed", static_cast<int64_t>(s.seed));
  d.insert("best_val_loss", s.best_val_loss);
  d.insert("rng_state", at::detail::getDefaultCPUGenerator().get_state());
  write_file_atomically(path, pickle_save_untagged(d), k_checkpoint_file);
}

Checkpoint read_checkpoint(const std::string& path) {
  const std::vector<char> bytes = read_all(path);
  torch::IValue value;
  try {
    value = torch::pickle_load(bytes);
  } catch (const std::exception& e) {
    std::string what = e.what();
    throw Error(path, "not a readable checkpoint (" + what.substr(0, what.find('\n')) + ")",
                "pass a file written by hpclaunch-train or torch.save(state_dict)");
  }
  if (!value.isGenericDict()) throw Error(path, "checkpoint is not a dict", "pass a state dict or a checkpoint");
  const GenericDict d = value.toGenericDict();
  Checkpoint c;
  GenericDict state = d;
  if (d.contains("model_state")) state = d.at("model_state").toGenericDict();  // ours and seed 000's layout
  for (const auto& entry : state) {
    if (!entry.key().isString() || !entry.value().isTensor()) continue;
    c.tensors[strip_module_prefix(entry.key().toStringRef())] = entry.value().toTensor();
  }
  if (d.contains("format") && d.at("format").toStringRef() == k_format) {
    TrainState& s = c.state;
    s.model = d.at("model").toStringRef();
    s.optimizer = d.at("optimizer").toStringRef();
    s.epoch = int_or(d, "epoch", 0);
    s.next_batch = int_or(d, "next_batch", 0);
    s.global_step = int_or(d, "global_step", 0);
    s.global_batch = int_or(d, "global_batch", 0);
    s.world_size = int_or(d, "world_size", 1);
    s.seed = static_cast<uint64_t>(int_or(d, "seed", 0));
    s.best_val_loss = d.at("best_val_loss").toDouble();
    const torch::Tensor opt = d.at("optimizer_archive").toTensor().contiguous();
    c.optimizer_bytes.assign(static_cast<const char*>(opt.data_ptr()),
                             static_cast<const char*>(opt.data_ptr()) + opt.numel());
    c.rng_state = d.at("rng_state").toTensor();
  }
  return c;
}

void load_model_state(torch::nn::Module& model, const Checkpoint& c, const std::string& path) {
  torch::NoGradGuard no_grad;
  auto load = [&](const std::string& name, torch::Tensor& target) {
    auto it = c.tensors.find(name);
    if (it == c.tensors.end())
      throw Error(path, "no tensor '" + name + "' for this model",
                  "resume with the same --model and size flags the checkpoint was written with");
    if (it->second.sizes() != target.sizes())
      throw Error(path, "'" + name + "' has shape " + c10::str(it->second.sizes()) + ", the model wants " +
                            c10::str(target.sizes()),
                  "resume with the same model size flags");
    target.copy_(it->second);
  };
  for (auto& item : model.named_parameters()) load(item.key(), item.value());
  for (auto& item : model.named_buffers()) load(item.key(), item.value());
}

void load_optimizer_state(torch::optim::Optimizer& optimizer, const Checkpoint& c, torch::Device device) {
  if (c.optimizer_bytes.empty()) return;
  torch::serialize::InputArchive archive;
  archive.load_from(c.optimizer_bytes.data(), c.optimizer_bytes.size(), device);
  optimizer.load(archive);
}

void save_state_dict_for_test(const std::string& path, torch::nn::Module& model, const std::string& prefix) {
  write_file_atomically(path, pickle_save_untagged(model_state_dict(model, prefix)), k_checkpoint_file);
}

int inspect_checkpoint(const std::string& path) {
  const Checkpoint c = read_checkpoint(path);
  int64_t numel = 0;
  for (const auto& entry : c.tensors) numel += entry.second.numel();
  // One JSON line (an infinite best_val_loss, no validation yet, is null).
  const nlohmann::ordered_json j{{"model", c.state.model},
                                 {"epoch", c.state.epoch},
                                 {"next_batch", c.state.next_batch},
                                 {"global_step", c.state.global_step},
                                 {"global_batch", c.state.global_batch},
                                 {"world_size", c.state.world_size},
                                 {"best_val_loss", c.state.best_val_loss},
                                 {"optimizer", c.state.optimizer},
                                 {"tensors", c.tensors.size()},
                                 {"elements", numel}};
  std::printf("%s\n", j.dump().c_str());
  return 0;
}

int compare_checkpoints(const std::string& a, const std::string& b, double tolerance) {
  const Checkpoint ca = read_checkpoint(a), cb = read_checkpoint(b);
  double worst = 0.0;
  std::string worst_name;
  size_t compared = 0;
  for (const auto& entry : ca.tensors) {
    auto it = cb.tensors.find(entry.first);
    if (it == cb.tensors.end() || it->second.sizes() != entry.second.sizes())
      throw Error(b, "has no tensor '" + entry.first + "' of the shape in " + a, "compare checkpoints of one model");
    if (!entry.second.is_floating_point()) continue;
    const double diff =
        entry.second.numel() ? (entry.second.to(torch::kFloat64) - it->second.to(torch::kFloat64)).abs().max().item<double>() : 0.0;
    ++compared;
    if (diff > worst || worst_name.empty()) {
      worst = std::max(worst, diff);
      if (diff >= worst) worst_name = entry.first;
    }
  }
  std::printf("compared %zu tensors: max |a-b| = %.3g (%s), tolerance %.3g: %s\n", compared, worst,
              worst_name.c_str(), tolerance, worst <= tolerance ? "same" : "DIFFERENT");
  return worst <= tolerance ? 0 : 1;
}

}  // namespace hpctrain
