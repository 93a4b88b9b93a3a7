// The Torch side: model shapes and names, checkpoints (round trip, DDP's "module." prefix), and the gradient
// reducer, alone and as two real gloo ranks (two threads, a TCPStore on loopback) against one process.
#include <doctest/doctest.h>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <thread>

#include "checkpoint.h"
#include "ddp.h"
#include "models.h"
#include "util/error.h"

using namespace hpctrain;

namespace {

int64_t count_params(torch::nn::Module& m) {
  int64_t n = 0;
  for (const auto& p : m.parameters()) n += p.numel();
  return n;
}

bool has_param(torch::nn::Module& m, const std::string& name) {
  return m.named_parameters().contains(name);
}

int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

struct TempDir {
  std::string path = "/tmp/hpctrain-torch-" + std::to_string(::getpid());
  TempDir() { std::filesystem::create_directories(path); }
  ~TempDir() { std::filesystem::remove_all(path); }
};

// A tiny copy of the auto-encoder's shape, to keep the DDP tests fast.
std::shared_ptr<TrainModel> small_autoencoder() {
  ModelSpec spec;
  spec.features = 20;
  return make_model(spec);
}

void copy_params(torch::nn::Module& from, torch::nn::Module& to) {
  torch::NoGradGuard no_grad;
  auto src = from.parameters();
  auto dst = to.parameters();
  for (size_t i = 0; i < src.size(); ++i) dst[i].copy_(src[i]);
}

// `steps` optimizer steps on consecutive slices of `data` of `batch` rows; DDP when comm is given.
void train(TrainModel& model, const torch::Tensor& data, int64_t batch, int steps, Communicator* comm,
           int64_t cap_bytes, bool adam) {
  std::unique_ptr<torch::optim::Optimizer> opt;
  if (adam) opt = std::make_unique<torch::optim::Adam>(model.parameters(), torch::optim::AdamOptions(1e-3));
  else opt = std::make_unique<torch::optim::SGD>(model.parameters(), torch::optim::SGDOptions(0.1).momentum(0.9));
  GradientReducer reducer(model.parameters(), comm, cap_bytes, cap_bytes);
  for (int s = 0; s < steps; ++s) {
    const torch::Tensor x = data.narrow(0, s * batch, batch);
    reducer.prepare();
    torch::Tensor loss = model.loss(model.forward(x), x);
    loss.backward();
    reducer.finish();
    opt->step();
  }
}

}  // namespace

TEST_SUITE_BEGIN("Models");

TEST_CASE("the auto-encoder maps 784 to 784 with the seed's parameter names") {
  auto m = make_model(ModelSpec{});
  CHECK(m->forward(torch::rand({4, 784})).sizes() == std::vector<int64_t>{4, 784});
  CHECK(has_param(*m, "net.0.weight"));
  CHECK(has_param(*m, "net.6.bias"));
  CHECK(count_params(*m) == 784 * 128 + 128 + 2 * (128 * 128 + 128) + 128 * 784 + 784);
}

TEST_CASE("ResNet-50 has torchvision's 25,557,032 parameters and names") {
  ModelSpec spec;
  spec.name = "resnet";
  auto m = make_model(spec);
  CHECK(count_params(*m) == 25557032);
  CHECK(has_param(*m, "layer1.0.downsample.0.weight"));
  CHECK(has_param(*m, "layer4.2.bn3.weight"));
  CHECK(has_param(*m, "fc.weight"));
}

TEST_CASE("a small ResNet classifies 28x28 grey images; ResNet-18 matches torchvision's size") {
  ModelSpec spec;
  spec.name = "resnet";
  spec.resnet_depth = 10;
  spec.resnet_width = 8;
  spec.in_channels = 1;
  spec.num_classes = 10;
  auto m = make_model(spec);
  CHECK(m->forward(torch::rand({2, 1, 28, 28})).sizes() == std::vector<int64_t>{2, 10});
  spec = ModelSpec{};
  spec.name = "resnet";
  spec.resnet_depth = 18;
  auto r18 = make_model(spec);
  CHECK(count_params(*r18) == 11689512);
}

TEST_CASE("the 3D U-Net maps 4-channel crops to 5 fields of the same size in [-1, 1]") {
  ModelSpec spec;
  spec.name = "unet3d";
  spec.unet_width = 2;
  auto m = make_model(spec);
  const auto out = m->forward(torch::randn({1, 4, 16, 16, 16}));
  CHECK(out.sizes() == std::vector<int64_t>{1, 5, 16, 16, 16});
  CHECK(out.abs().max().item<float>() <= 1.0f);
}

TEST_SUITE_END();

TEST_SUITE_BEGIN("Checkpoint");

TEST_CASE("a checkpoint round-trips the model, the optimizer and the position") {
  TempDir dir;
  auto a = small_autoencoder();
  torch::optim::Adam opt(a->parameters(), torch::optim::AdamOptions(1e-3));
  const auto x = torch::rand({8, 20});
  a->loss(a->forward(x), x).backward();
  opt.step();
  TrainState s;
  s.model = "autoencoder";
  s.optimizer = "adam";
  s.epoch = 2;
  s.next_batch = 7;
  s.global_step = 31;
  s.global_batch = 64;
  s.best_val_loss = 0.25;
  save_checkpoint(dir.path + "/c.pt", *a, opt, s);

  const Checkpoint c = read_checkpoint(dir.path + "/c.pt");
  CHECK(c.state.epoch == 2);
  CHECK(c.state.next_batch == 7);
  CHECK(c.state.global_step == 31);
  CHECK(c.state.global_batch == 64);
  CHECK(c.state.best_val_loss == doctest::Approx(0.25));
  auto b = small_autoencoder();
  torch::optim::Adam opt_b(b->parameters(), torch::optim::AdamOptions(1e-3));
  load_model_state(*b, c, "c.pt");
  load_optimizer_state(opt_b, c, torch::kCPU);
  for (size_t i = 0; i < a->parameters().size(); ++i) CHECK(a->parameters()[i].equal(b->parameters()[i]));
  // Same optimizer state: one more identical step keeps them identical.
  a->zero_grad();
  a->loss(a->forward(x), x).backward();
  b->loss(b->forward(x), x).backward();
  opt.step();
  opt_b.step();
  for (size_t i = 0; i < a->parameters().size(); ++i) CHECK(a->parameters()[i].equal(b->parameters()[i]));
}

TEST_CASE("a state dict saved through DDP, with 'module.' names, loads into the bare model") {
  TempDir dir;
  auto a = small_autoencoder();
  save_state_dict_for_test(dir.path + "/ddp.pt", *a, "module.");
  auto b = small_autoencoder();
  load_model_state(*b, read_checkpoint(dir.path + "/ddp.pt"), "ddp.pt");
  for (size_t i = 0; i < a->parameters().size(); ++i) CHECK(a->parameters()[i].equal(b->parameters()[i]));
  CHECK(strip_module_prefix("module.net.0.weight") == "net.0.weight");
  CHECK(strip_module_prefix("net.0.weight") == "net.0.weight");
}

TEST_CASE("a checkpoint of another model is refused naming the file and the missing key") {
  TempDir dir;
  auto a = small_autoencoder();
  save_state_dict_for_test(dir.path + "/ae.pt", *a, "");
  ModelSpec spec;
  spec.name = "unet3d";
  spec.unet_width = 2;
  auto u = make_model(spec);
  CHECK_THROWS_WITH_AS(load_model_state(*u, read_checkpoint(dir.path + "/ae.pt"), "ae.pt"),
                       doctest::Contains("ae.pt: no tensor 'conv_down1.0.weight'"), hpclaunch::Error);
  std::ofstream(dir.path + "/junk.pt") << "not a checkpoint";
  CHECK_THROWS_WITH_AS(read_checkpoint(dir.path + "/junk.pt"), doctest::Contains("not a readable checkpoint"),
                       hpclaunch::Error);
}

TEST_SUITE_END();

TEST_SUITE_BEGIN("GradientReducer");

TEST_CASE("alone, gradients land in bucket views and equal plain autograd's") {
  auto a = small_autoencoder();
  auto b = small_autoencoder();
  copy_params(*a, *b);
  Communicator alone;
  GradientReducer reducer(a->parameters(), &alone, 512, 512);
  CHECK(reducer.bucket_count() > 1);  // small cap: several buckets
  const auto x = torch::rand({6, 20});
  for (int repeat = 0; repeat < 2; ++repeat) {  // the second pass checks that prepare() zeroes
    reducer.prepare();
    reducer.control()[2].fill_(3.0);
    a->loss(a->forward(x), x).backward();
    reducer.finish();
    CHECK(reducer.control()[2].item<float>() == doctest::Approx(3.0));
  }
  b->zero_grad();
  b->loss(b->forward(x), x).backward();
  for (size_t i = 0; i < a->parameters().size(); ++i)
    CHECK(torch::allclose(a->parameters()[i].grad(), b->parameters()[i].grad()));
}

TEST_CASE("two gloo ranks on batch B each reach the parameters of one process on batch 2B") {
  if (!hpctrain::compat::k_have_gloo) {
    // CTest reports the case skipped from this line (SKIP_REGULAR_EXPRESSION in trainer/CMakeLists.txt), and
    // scripts/test.sh lists it; doctest::skip would leave it out of the list of cases, unseen.
    std::cout << "SKIP: this LibTorch has no gloo (a pip wheel's): no two gloo ranks to compare" << std::endl;
    return;
  }
  // SGD is linear in the gradient: only summation order differs. Adam divides by sqrt(v), which magnifies
  // rounding in near-zero gradients, so its tolerance is looser.
  bool adam = false;
  SUBCASE("SGD with momentum") { adam = false; }
  SUBCASE("Adam") { adam = true; }
  const double tolerance = adam ? 1e-5 : 1e-6;
  CAPTURE(adam);
  const int64_t batch = 8;
  const int steps = 4;
  torch::manual_seed(3);
  const auto data = torch::rand({2 * batch * steps, 20});
  auto reference = small_autoencoder();
  std::shared_ptr<TrainModel> ranks[2] = {small_autoencoder(), small_autoencoder()};
  copy_params(*reference, *ranks[0]);  // rank 1 starts different: the broadcast must fix that

  // Rank r's half of global batch s: rows r, r+2, r+4... (the sampler's interleaving).
  auto half = [&](int r) {
    std::vector<torch::Tensor> parts;
    for (int s = 0; s < steps; ++s)
      parts.push_back(data.narrow(0, s * 2 * batch, 2 * batch).index({torch::indexing::Slice(r, torch::indexing::None, 2)}));
    return torch::cat(parts);
  };
  const int port = free_port();
  std::string errors[2];
  auto worker = [&](int r) {
    try {
      DistEnv env;
      env.rank = r;
      env.world_size = 2;
      env.master_addr = "127.0.0.1";
      env.master_port = port;
      auto comm = Communicator::connect(env, "gloo");
      comm->broadcast(ranks[r]->parameters());
      train(*ranks[r], half(r), batch, steps, comm.get(), 2048, adam);  // small cap: several buckets overlap
      comm->barrier();
    } catch (const std::exception& e) {
      errors[r] = e.what();
    }
  };
  std::thread t0(worker, 0), t1(worker, 1);
  t0.join();
  t1.join();
  CHECK(errors[0] == "");
  CHECK(errors[1] == "");
  train(*reference, data, 2 * batch, steps, nullptr, 2048, adam);
  for (size_t i = 0; i < reference->parameters().size(); ++i) {
    CHECK(ranks[0]->parameters()[i].equal(ranks[1]->parameters()[i]));  // identical on every rank
    const double diff = (ranks[0]->parameters()[i] - reference->parameters()[i]).abs().max().item<double>();
    CHECK_MESSAGE(diff < tolerance, "parameter " << i << " differs by " << diff);
  }
}

TEST_SUITE_END();
