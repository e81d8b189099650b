"""Trains two models in each iteration: a tiny GAN (generator + discriminator) or
teacher/student distillation, on batches from a DataLoader (or, with --no-loader, from
pre-made tensors).

Plain PyTorch, no stepscope calls: profile it with

    stepscope run -- python3 examples/pytorch/several_models.py --pair gan

One iteration is one TRAIN step, whichever models run in it. Per iteration the GAN calls the
generator once and the discriminator three times (real, fake for D, fake for G) with two
backward passes and two optimizer steps; distillation calls the teacher (eval mode, no_grad)
and the student once each, with one backward and one optimizer step.
"""

import argparse

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

LATENT = 8
FEATURES = 16


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pair", choices=("gan", "distill"), default="gan")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--samples", type=int, default=256)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--no-loader", action="store_true",
                        help="iterate over pre-made batch tensors instead of a DataLoader")
    return parser.parse_args()


def batches(args, data):
    """The epoch's batches: from a DataLoader, or slices of one tensor (--no-loader)."""
    if args.no_loader:
        return [(data[i:i + args.batch_size],) for i in range(0, len(data), args.batch_size)]
    return DataLoader(TensorDataset(data), batch_size=args.batch_size, shuffle=True)


def train_gan(args, data):
    generator = nn.Sequential(nn.Linear(LATENT, 32), nn.ReLU(), nn.Linear(32, FEATURES))
    discriminator = nn.Sequential(nn.Linear(FEATURES, 32), nn.LeakyReLU(0.2), nn.Linear(32, 1))
    opt_g = torch.optim.Adam(generator.parameters(), lr=1e-3)
    opt_d = torch.optim.Adam(discriminator.parameters(), lr=1e-3)
    iterations = 0
    for epoch in range(args.epochs):
        for (real,) in batches(args, data):
            # The generator runs first, so without a DataLoader it is the model that marks steps.
            fake = generator(torch.randn(len(real), LATENT))
            d_real, d_fake = discriminator(real), discriminator(fake.detach())
            loss_d = (F.binary_cross_entropy_with_logits(d_real, torch.ones_like(d_real))
                      + F.binary_cross_entropy_with_logits(d_fake, torch.zeros_like(d_fake)))
            opt_d.zero_grad()
            loss_d.backward()
            opt_d.step()
            d_out = discriminator(fake)
            loss_g = F.binary_cross_entropy_with_logits(d_out, torch.ones_like(d_out))
            opt_g.zero_grad()
            loss_g.backward()
            opt_g.step()
            iterations += 1
        print(f"epoch {epoch}: loss_d {loss_d.item():.4f} loss_g {loss_g.item():.4f}")
    return iterations


def train_distill(args, data):
    teacher = nn.Sequential(nn.Linear(FEATURES, 64), nn.ReLU(), nn.Linear(64, 4)).eval()
    student = nn.Sequential(nn.Linear(FEATURES, 8), nn.ReLU(), nn.Linear(8, 4))
    optimizer = torch.optim.SGD(student.parameters(), lr=0.05)
    iterations = 0
    for epoch in range(args.epochs):
        student.train()
        for (x,) in batches(args, data):
            with torch.no_grad():
                soft_targets = F.softmax(teacher(x) / 2.0, dim=1)
            loss = F.kl_div(F.log_softmax(student(x) / 2.0, dim=1), soft_targets,
                            reduction="batchmean")
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            iterations += 1
        print(f"epoch {epoch}: distillation loss {loss.item():.4f}")
    return iterations


def main():
    args = parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(1)
    data = torch.randn(args.samples, FEATURES, generator=torch.Generator().manual_seed(1))
    iterations = (train_gan if args.pair == "gan" else train_distill)(args, data)
    print(f"train_iterations={iterations}")


if __name__ == "__main__":
    main()
