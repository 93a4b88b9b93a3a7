# The Lightning clients' model (t0427, t0441): a LightningModule of one linear layer, MSE on random data, SGD;
# a test copies this file beside its script and subclasses or uses it as it is.
import torch
import lightning as L
from torch.utils.data import DataLoader, TensorDataset


class Tiny(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = torch.nn.Linear(4, 1)

    def training_step(self, batch, _):
        x, y = batch
        return torch.nn.functional.mse_loss(self.layer(x), y)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def data():
    return DataLoader(TensorDataset(torch.randn(16, 4), torch.randn(16, 1)), batch_size=2)
