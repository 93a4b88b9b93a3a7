// The models hpclaunch-train trains, from the seeds: the MNIST auto-encoder (784-128-128-128-784, ReLU, MSE),
// torchvision's ResNet family (cross-entropy) and the light 3D U-Net of the Perlmutter tutorial (L1).
// Parameter names follow the Python originals, so state dicts line up with theirs.
#pragma once
#include <torch/torch.h>

#include <memory>
#include <string>

namespace hpctrain {

class TrainModel : public torch::nn::Module {
 public:
  virtual torch::Tensor forward(torch::Tensor input) = 0;
  virtual torch::Tensor loss(const torch::Tensor& output, const torch::Tensor& target) = 0;
};

struct ModelSpec {
  std::string name = "autoencoder";  // autoencoder | resnet | unet3d
  int64_t features = 784;            // autoencoder input size
  int resnet_depth = 50;
  int resnet_width = 64;
  int in_channels = 3;
  int num_classes = 1000;
  int unet_width = 64;
};

std::shared_ptr<TrainModel> make_model(const ModelSpec& spec);

}  // namespace hpctrain
