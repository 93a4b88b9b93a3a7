// Model definitions: see models.h.
#include "models.h"

#include <stdexcept>
#include <vector>

namespace hpctrain {
namespace nn = torch::nn;
namespace {

class Autoencoder : public TrainModel {
 public:
  explicit Autoencoder(int64_t features) {
    m_net = register_module(
        "net", nn::Sequential(nn::Linear(features, 128), nn::ReLU(nn::ReLUOptions().inplace(true)),
                              nn::Linear(128, 128), nn::ReLU(nn::ReLUOptions().inplace(true)),
                              nn::Linear(128, 128), nn::ReLU(nn::ReLUOptions().inplace(true)),
                              nn::Linear(128, features), nn::ReLU(nn::ReLUOptions().inplace(true))));
  }
  torch::Tensor forward(torch::Tensor input) override { return m_net->forward(input); }
  torch::Tensor loss(const torch::Tensor& output, const torch::Tensor& target) override {
    return torch::mse_loss(output, target);
  }

 private:
  nn::Sequential m_net{nullptr};
};

nn::Conv2d conv(int64_t in, int64_t out, int64_t kernel, int64_t stride, int64_t padding) {
  return nn::Conv2d(nn::Conv2dOptions(in, out, kernel).stride(stride).padding(padding).bias(false));
}

class ResBlock : public nn::Module {
 public:
  virtual torch::Tensor forward(torch::Tensor x) = 0;
};

class BasicBlock : public ResBlock {
 public:
  static constexpr int64_t k_expansion = 1;
  BasicBlock(int64_t in, int64_t planes, int64_t stride) {
    m_conv1 = register_module("conv1", conv(in, planes, 3, stride, 1));
    m_bn1 = register_module("bn1", nn::BatchNorm2d(planes));
    m_conv2 = register_module("conv2", conv(planes, planes, 3, 1, 1));
    m_bn2 = register_module("bn2", nn::BatchNorm2d(planes));
    if (stride != 1 || in != planes)
      m_down = register_module("downsample", nn::Sequential(conv(in, planes, 1, stride, 0), nn::BatchNorm2d(planes)));
  }
  torch::Tensor forward(torch::Tensor x) override {
    torch::Tensor out = m_bn1->forward(m_conv1->forward(x)).relu_();
    out = m_bn2->forward(m_conv2->forward(out));
    out += m_down ? m_down->forward(x) : x;
    return torch::relu_(out);
  }

 private:
  nn::Conv2d m_conv1{nullptr}, m_conv2{nullptr};
  nn::BatchNorm2d m_bn1{nullptr}, m_bn2{nullptr};
  nn::Sequential m_down{nullptr};
};

class Bottleneck : public ResBlock {
 public:
  static constexpr int64_t k_expansion = 4;
  Bottleneck(int64_t in, int64_t planes, int64_t stride) {
    m_conv1 = register_module("conv1", conv(in, planes, 1, 1, 0));
    m_bn1 = register_module("bn1", nn::BatchNorm2d(planes));
    m_conv2 = register_module("conv2", conv(planes, planes, 3, stride, 1));
    m_bn2 = register_module("bn2", nn::BatchNorm2d(planes));
    m_conv3 = register_module("conv3", conv(planes, planes * k_expansion, 1, 1, 0));
    m_bn3 = register_module("bn3", nn::BatchNorm2d(planes * k_expansion));
    if (stride != 1 || in != planes * k_expansion)
      m_down = register_module("downsample", nn::Sequential(conv(in, planes * k_expansion, 1, stride, 0),
                                                            nn::BatchNorm2d(planes * k_expansion)));
  }
  torch::Tensor forward(torch::Tensor x) override {
    torch::Tensor out = m_bn1->forward(m_conv1->forward(x)).relu_();
    out = m_bn2->forward(m_conv2->forward(out)).relu_();
    out = m_bn3->forward(m_conv3->forward(out));
    out += m_down ? m_down->forward(x) : x;
    return torch::relu_(out);
  }

 private:
  nn::Conv2d m_conv1{nullptr}, m_conv2{nullptr}, m_conv3{nullptr};
  nn::BatchNorm2d m_bn1{nullptr}, m_bn2{nullptr}, m_bn3{nullptr};
  nn::Sequential m_down{nullptr};
};

class ResNet : public TrainModel {
 public:
  ResNet(int depth, int width, int in_channels, int num_classes) {
    const bool bottleneck = depth >= 50;
    std::vector<int> counts;
    switch (depth) {
      case 10: counts = {1, 1, 1, 1}; break;
      case 18: counts = {2, 2, 2, 2}; break;
      case 34: case 50: counts = {3, 4, 6, 3}; break;
      case 101: counts = {3, 4, 23, 3}; break;
      case 152: counts = {3, 8, 36, 3}; break;
      default: throw std::invalid_argument("unsupported ResNet depth " + std::to_string(depth));
    }
    const int64_t expansion = bottleneck ? Bottleneck::k_expansion : BasicBlock::k_expansion;
    m_conv1 = register_module("conv1", conv(in_channels, width, 7, 2, 3));
    m_bn1 = register_module("bn1", nn::BatchNorm2d(width));
    int64_t in = width;
    for (int stage = 0; stage < 4; ++stage) {
      nn::ModuleList layer;
      const int64_t planes = int64_t{width} << stage;
      for (int b = 0; b < counts[static_cast<size_t>(stage)]; ++b) {
        const int64_t stride = (stage > 0 && b == 0) ? 2 : 1;
        std::shared_ptr<ResBlock> block;
        if (bottleneck) block = std::make_shared<Bottleneck>(in, planes, stride);
        else block = std::make_shared<BasicBlock>(in, planes, stride);
        layer->push_back(block);
        m_blocks.push_back(block.get());
        in = planes * expansion;
      }
      register_module("layer" + std::to_string(stage + 1), layer);
    }
    m_fc = register_module("fc", nn::Linear(in, num_classes));
    for (auto& module : modules(/*include_self=*/false)) {
      if (auto* c = module->as<nn::Conv2d>())
        nn::init::kaiming_normal_(c->weight, 0.0, torch::kFanOut, torch::kReLU);
    }
  }
  torch::Tensor forward(torch::Tensor x) override {
    x = m_bn1->forward(m_conv1->forward(x)).relu_();
    x = torch::max_pool2d(x, 3, 2, 1);
    for (ResBlock* block : m_blocks) x = block->forward(x);
    x = torch::adaptive_avg_pool2d(x, {1, 1}).flatten(1);
    return m_fc->forward(x);
  }
  torch::Tensor loss(const torch::Tensor& output, const torch::Tensor& target) override {
    return torch::cross_entropy_loss(output, target);
  }

 private:
  nn::Conv2d m_conv1{nullptr};
  nn::BatchNorm2d m_bn1{nullptr};
  nn::Linear m_fc{nullptr};
  std::vector<ResBlock*> m_blocks;
};

// NERSC's UNet.py: four stride-2 4^3 convolutions down, four transposed ones up with skip connections,
// LeakyReLU, a final 3^3 convolution to 5 output fields and tanh.
class UNet3d : public TrainModel {
 public:
  UNet3d(int64_t width, int64_t in_channels, int64_t out_channels) {
    const int64_t w = width;
    m_down1 = register_module("conv_down1", down(in_channels, w));
    m_down2 = register_module("conv_down2", down(w, 2 * w));
    m_down3 = register_module("conv_down3", down(2 * w, 4 * w));
    m_down4 = register_module("conv_down4", down(4 * w, 8 * w));
    m_up3 = register_module("conv_up3", up(8 * w, 4 * w));
    m_up2 = register_module("conv_up2", up(8 * w, 2 * w));
    m_up1 = register_module("conv_up1", up(4 * w, w));
    m_up0 = register_module("conv_up0", up(2 * w, w));
    m_last = register_module("conv_last",
                             nn::Conv3d(nn::Conv3dOptions(w + in_channels, out_channels, 3).padding(1)));
  }
  torch::Tensor forward(torch::Tensor input) override {
    torch::Tensor c1 = m_down1->forward(input);
    torch::Tensor c2 = m_down2->forward(c1);
    torch::Tensor c3 = m_down3->forward(c2);
    torch::Tensor x = m_up3->forward(m_down4->forward(c3));
    x = m_up2->forward(torch::cat({x, c3}, 1));
    x = m_up1->forward(torch::cat({x, c2}, 1));
    x = m_up0->forward(torch::cat({x, c1}, 1));
    return torch::tanh(m_last->forward(torch::cat({x, input}, 1)));
  }
  torch::Tensor loss(const torch::Tensor& output, const torch::Tensor& target) override {
    return torch::l1_loss(output, target);
  }

 private:
  static nn::Sequential down(int64_t in, int64_t out) {
    return nn::Sequential(nn::Conv3d(nn::Conv3dOptions(in, out, 4).stride(2).padding(1)),
                          nn::LeakyReLU(nn::LeakyReLUOptions().negative_slope(0.2).inplace(true)));
  }
  static nn::Sequential up(int64_t in, int64_t out) {
    return nn::Sequential(nn::ConvTranspose3d(nn::ConvTranspose3dOptions(in, out, 4).stride(2).padding(1)),
                          nn::LeakyReLU(nn::LeakyReLUOptions().negative_slope(0.2).inplace(true)));
  }
  nn::Sequential m_down1{nullptr}, m_down2{nullptr}, m_down3{nullptr}, m_down4{nullptr};
  nn::Sequential m_up3{nullptr}, m_up2{nullptr}, m_up1{nullptr}, m_up0{nullptr};
  nn::Conv3d m_last{nullptr};
};

}  // namespace

std::shared_ptr<TrainModel> make_model(const ModelSpec& spec) {
  if (spec.name == "autoencoder") return std::make_shared<Autoencoder>(spec.features);
  if (spec.name == "resnet")
    return std::make_shared<ResNet>(spec.resnet_depth, spec.resnet_width, spec.in_channels, spec.num_classes);
  if (spec.name == "unet3d") return std::make_shared<UNet3d>(spec.unet_width, 4, 5);
  throw std::invalid_argument("unknown model " + spec.name);
}

}  // namespace hpctrain
