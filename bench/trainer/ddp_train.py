#!/usr/bin/python3
"""The Python PyTorch DDP counterpart of hpclaunch-train for the benchmark: the same models (auto-encoder,
ResNet of a given depth/width), data (Fashion-MNIST IDX files or a synthetic pool), batch, optimizer, threads
and backend, written the way the seeds' train.py files do it (DistributedDataParallel, DistributedSampler).

Run under torchrun or with RANK/WORLD_SIZE/MASTER_ADDR/MASTER_PORT set (bench/trainer/run.sh does the latter).
On a GPU (bench/trainer/gpu.sh): --device cuda --backend nccl, --amp (bfloat16 autocast), --channels-last,
the 3D U-Net (--model unet3d), eager DDP (no torch.compile); batches are copied from pinned host memory with
non_blocking, and the clock is read after torch.cuda.synchronize(). --loader workers is what users write on a GPU
(DataLoader worker processes, pin_memory=True); --loader resident steps on one batch already on the GPU every step
(no input cost at all: the ceiling for any input path).
Prints one JSON line on rank 0: {"samples_per_s": ..., "steps": ..., ...}, measured over the steps after
--warmup-steps, as the sum of global batch sizes over the sum of step times (what hpclaunch-train's --metrics
gives), and samples per CPU-second (rank 0's process CPU time x ranks), which other load on the machine
disturbs far less than wall time.
"""
import argparse
import gzip
import json
import os
import struct
import time

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


class AE(nn.Module):  # seed 003's auto-encoder
    def __init__(self, input_shape=784):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(input_shape, 128), nn.ReLU(inplace=True),
            nn.Linear(128, 128), nn.ReLU(inplace=True),
            nn.Linear(128, 128), nn.ReLU(inplace=True),
            nn.Linear(128, input_shape), nn.ReLU(inplace=True))

    def forward(self, x):
        return self.net(x)


class BasicBlock(nn.Module):  # torchvision's, as hpclaunch-train's models.cc
    expansion = 1

    def __init__(self, inplanes, planes, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(inplanes, planes, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.downsample = None
        if stride != 1 or inplanes != planes:
            self.downsample = nn.Sequential(nn.Conv2d(inplanes, planes, 1, stride, bias=False), nn.BatchNorm2d(planes))

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)), inplace=True)
        out = self.bn2(self.conv2(out))
        out += self.downsample(x) if self.downsample is not None else x
        return F.relu(out, inplace=True)


class Bottleneck(nn.Module):
    expansion = 4

    def __init__(self, inplanes, planes, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(inplanes, planes, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, 3, stride, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.conv3 = nn.Conv2d(planes, planes * 4, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(planes * 4)
        self.downsample = None
        if stride != 1 or inplanes != planes * 4:
            self.downsample = nn.Sequential(nn.Conv2d(inplanes, planes * 4, 1, stride, bias=False),
                                            nn.BatchNorm2d(planes * 4))

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)), inplace=True)
        out = F.relu(self.bn2(self.conv2(out)), inplace=True)
        out = self.bn3(self.conv3(out))
        out += self.downsample(x) if self.downsample is not None else x
        return F.relu(out, inplace=True)


class ResNet(nn.Module):
    COUNTS = {10: [1, 1, 1, 1], 18: [2, 2, 2, 2], 34: [3, 4, 6, 3], 50: [3, 4, 6, 3], 101: [3, 4, 23, 3],
              152: [3, 8, 36, 3]}

    def __init__(self, depth, width, in_channels, num_classes):
        super().__init__()
        block = Bottleneck if depth >= 50 else BasicBlock
        self.conv1 = nn.Conv2d(in_channels, width, 7, 2, 3, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        inplanes = width
        for stage, count in enumerate(self.COUNTS[depth]):
            blocks = []
            for b in range(count):
                blocks.append(block(inplanes, width << stage, 2 if stage > 0 and b == 0 else 1))
                inplanes = (width << stage) * block.expansion
            setattr(self, f"layer{stage + 1}", nn.Sequential(*blocks))
        self.fc = nn.Linear(inplanes, num_classes)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn1(self.conv1(x)), inplace=True), 3, 2, 1)
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


class UNet3d(nn.Module):  # NERSC's UNet.py, as hpclaunch-train's models.cc
    def __init__(self, width=64, in_channels=4, out_channels=5):
        super().__init__()
        w = width

        def down(i, o):
            return nn.Sequential(nn.Conv3d(i, o, 4, 2, 1), nn.LeakyReLU(0.2, inplace=True))

        def up(i, o):
            return nn.Sequential(nn.ConvTranspose3d(i, o, 4, 2, 1), nn.LeakyReLU(0.2, inplace=True))
        self.conv_down1, self.conv_down2 = down(in_channels, w), down(w, 2 * w)
        self.conv_down3, self.conv_down4 = down(2 * w, 4 * w), down(4 * w, 8 * w)
        self.conv_up3, self.conv_up2 = up(8 * w, 4 * w), up(8 * w, 2 * w)
        self.conv_up1, self.conv_up0 = up(4 * w, w), up(2 * w, w)
        self.conv_last = nn.Conv3d(w + in_channels, out_channels, 3, padding=1)

    def forward(self, x):
        c1 = self.conv_down1(x)
        c2 = self.conv_down2(c1)
        c3 = self.conv_down3(c2)
        y = self.conv_up3(self.conv_down4(c3))
        y = self.conv_up2(torch.cat([y, c3], 1))
        y = self.conv_up1(torch.cat([y, c2], 1))
        y = self.conv_up0(torch.cat([y, c1], 1))
        return torch.tanh(self.conv_last(torch.cat([y, x], 1)))


def read_idx(path):
    with gzip.open(path, "rb") as f:
        data = f.read()
    ndims = data[3]
    dims = struct.unpack(">" + "I" * ndims, data[4:4 + 4 * ndims])
    return torch.frombuffer(bytearray(data[4 + 4 * ndims:]), dtype=torch.uint8).reshape(dims)


def load_data(args):
    if not args.synthetic:
        x = read_idx(os.path.join(args.data_dir, "train-images-idx3-ubyte.gz")).float().div_(255.0)
        if args.model == "autoencoder":
            x = x.reshape(x.shape[0], -1)
            return TensorDataset(x, x), (784, 1, 10)
        y = read_idx(os.path.join(args.data_dir, "train-labels-idx1-ubyte.gz")).long()
        return TensorDataset(x.unsqueeze(1), y), (784, 1, 10)
    g = torch.Generator().manual_seed(args.seed * 2 + 1)
    n = args.synthetic_samples
    if args.model == "unet3d":
        c = args.crop
        pool = torch.randn(min(n, 4), 4, c, c, c, generator=g)
        target = torch.rand(pool.shape[0], 5, c, c, c, generator=g).mul_(2).sub_(1)
        return _PoolDataset(pool, target, torch.arange(n) % pool.shape[0]), (784, 4, 5)
    if args.model == "autoencoder":
        pool = torch.rand(min(n, 4096), 784, generator=g)
        x = pool.repeat((n + pool.shape[0] - 1) // pool.shape[0], 1)[:n]
        return TensorDataset(x, x), (784, 3, args.num_classes)
    pool = torch.randn(min(n, 64), 3, args.image_size, args.image_size, generator=g)
    labels = torch.randint(args.num_classes, (pool.shape[0],), generator=g)
    # Index a pool of generated samples, as hpclaunch-train does.
    index = torch.arange(n) % pool.shape[0]
    return _PoolDataset(pool, labels, index), (784, 3, args.num_classes)


class _PoolDataset(torch.utils.data.Dataset):
    def __init__(self, pool, labels, index):
        self.pool, self.labels, self.index = pool, labels, index

    def __len__(self):
        return len(self.index)

    def __getitem__(self, i):
        j = self.index[i]
        return self.pool[j], self.labels[j]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", choices=["autoencoder", "resnet", "unet3d"], default="autoencoder")
    p.add_argument("--unet-width", type=int, default=64)
    p.add_argument("--crop", type=int, default=64)
    p.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    p.add_argument("--backend", choices=["gloo", "nccl"], default="gloo")
    p.add_argument("--amp", action="store_true", help="bfloat16 autocast (CUDA)")
    p.add_argument("--channels-last", action="store_true", help="channels-last weights and inputs (CUDA)")
    p.add_argument("--resnet-depth", type=int, default=18)
    p.add_argument("--resnet-width", type=int, default=64)
    p.add_argument("--image-size", type=int, default=224)
    p.add_argument("--num-classes", type=int, default=1000)
    p.add_argument("--synthetic", action="store_true")
    p.add_argument("--synthetic-samples", type=int, default=60000)
    p.add_argument("--data-dir", default="/usr/share/datasets/fashion-mnist")
    p.add_argument("--batch-size", type=int, default=128, help="per rank")
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--warmup-steps", type=int, default=20, help="steps left out of the measurement")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--loader", choices=["dataloader", "index", "workers", "resident"], default="dataloader",
                   help="dataloader: DataLoader+DistributedSampler as the seeds; index: gather batches by indexing; "
                        "workers: DataLoader(num_workers=--num-workers, pin_memory=True), what users write on a GPU; "
                        "resident: one batch already on the device, stepped on every step (no input cost: the "
                        "ceiling)")
    p.add_argument("--num-workers", type=int, default=8, help="--loader workers: DataLoader worker processes")
    args = p.parse_args()

    torch.set_num_threads(args.threads)
    dist.init_process_group(args.backend, init_method="env://")
    rank, world = dist.get_rank(), dist.get_world_size()
    cuda = args.device == "cuda"
    device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", "0")) % max(torch.cuda.device_count(), 1)) if cuda \
        else torch.device("cpu")
    if cuda:
        torch.cuda.set_device(device)
    fmt = None
    if args.channels_last:
        fmt = torch.channels_last_3d if args.model == "unet3d" else torch.channels_last
    dataset, (features, channels, classes) = load_data(args)
    torch.manual_seed(args.seed)
    if args.model == "autoencoder":
        model, criterion = AE(features), nn.MSELoss()
    elif args.model == "unet3d":
        model, criterion = UNet3d(args.unet_width), nn.L1Loss()
    else:
        model, criterion = ResNet(args.resnet_depth, args.resnet_width, channels, classes), nn.CrossEntropyLoss()
    model = model.to(device)
    if fmt is not None:
        model = model.to(memory_format=fmt)
    model = DDP(model, device_ids=[device.index] if cuda else None)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    sampler = DistributedSampler(dataset, num_replicas=world, rank=rank, shuffle=True, seed=args.seed)

    resident = None

    def batches(epoch):
        nonlocal resident
        sampler.set_epoch(epoch)
        if args.loader == "dataloader":
            yield from DataLoader(dataset, batch_size=args.batch_size, sampler=sampler, drop_last=True,
                                  num_workers=0)
        elif args.loader == "workers":
            yield from DataLoader(dataset, batch_size=args.batch_size, sampler=sampler, drop_last=True,
                                  num_workers=args.num_workers, pin_memory=cuda, persistent_workers=False)
        elif args.loader == "resident":
            if resident is None:
                x, y = next(iter(DataLoader(dataset, batch_size=args.batch_size, sampler=sampler, drop_last=True)))
                x = x.to(device)
                resident = (x.contiguous(memory_format=fmt) if fmt is not None else x, y.to(device))
            for _ in range(len(sampler) // args.batch_size):
                yield resident
        else:
            order = torch.tensor(list(iter(sampler)))
            tensors = dataset.tensors if isinstance(dataset, TensorDataset) else None
            for b in range(len(order) // args.batch_size):
                idx = order[b * args.batch_size:(b + 1) * args.batch_size]
                if tensors is not None:
                    yield tensors[0].index_select(0, idx), tensors[1].index_select(0, idx)
                else:
                    j = dataset.index[idx]
                    yield dataset.pool.index_select(0, j), dataset.labels.index_select(0, j)

    step, measured_time, measured_cpu, measured_samples, epoch = 0, 0.0, 0.0, 0, 0
    loss = torch.zeros(())
    while step < args.steps:
        it = iter(batches(epoch))
        while step < args.steps:
            start = time.perf_counter()
            cpu_start = time.process_time()  # the whole process: every thread, gloo's included
            try:
                x, y = next(it)
            except StopIteration:
                break
            if cuda:
                if args.loader == "workers":  # pinned by the DataLoader's pin-memory thread
                    x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
                elif args.loader != "resident":
                    x, y = x.pin_memory().to(device, non_blocking=True), y.pin_memory().to(device, non_blocking=True)
                if fmt is not None:
                    x = x.contiguous(memory_format=fmt)
            optimizer.zero_grad()
            with torch.autocast(device_type=args.device, dtype=torch.bfloat16, enabled=args.amp):
                out = model(x)
            loss = criterion(out.float(), y)
            loss.backward()
            optimizer.step()
            if cuda:
                torch.cuda.synchronize()
            elapsed = time.perf_counter() - start
            cpu = time.process_time() - cpu_start
            step += 1
            if step > args.warmup_steps:
                measured_time += elapsed
                measured_cpu += cpu
                measured_samples += args.batch_size * world
        epoch += 1
    if rank == 0:
        print(json.dumps({"impl": "python-ddp", "loader": args.loader, "model": args.model, "world_size": world,
                          "steps": step, "measured_steps": step - args.warmup_steps,
                          "samples_per_s": measured_samples / measured_time,
                          "samples_per_cpu_s": measured_samples / (measured_cpu * world), "final_loss": float(loss.detach())}))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
