"""Fine-tunes a tiny BERT classifier, built locally from a config (nothing is downloaded), with the
Hugging Face Trainer on the CPU in a few seconds: 2 epochs with an evaluation after each and
`--accumulate` gradient-accumulation steps. Plain transformers: no stepscope calls. Profile it
with

    stepscope run -- python examples/frameworks/hf_trainer.py --accumulate 4

Its last line says what the Trainer processed, counted by a callback:
``train_batches=<n> eval_batches=<n> optimizer_steps=<n>``.
"""

import argparse
import os
import tempfile

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # a tiny model from a config needs no hub
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import torch  # noqa: E402
from torch.utils.data import Dataset  # noqa: E402
from transformers import (BertConfig, BertForSequenceClassification, Trainer, TrainerCallback,  # noqa: E402
                          TrainingArguments)
from transformers.utils import logging as hf_logging  # noqa: E402

VOCAB, LENGTH = 64, 16


class Sentences(Dataset):
    """Random token sequences labelled by whether token 7 occurs in them."""

    def __init__(self, samples, seed):
        g = torch.Generator().manual_seed(seed)
        self.ids = torch.randint(1, VOCAB, (samples, LENGTH), generator=g)
        self.labels = (self.ids == 7).any(dim=1).long()

    def __len__(self):
        return len(self.ids)

    def __getitem__(self, index):
        return {"input_ids": self.ids[index], "attention_mask": torch.ones(LENGTH, dtype=torch.long),
                "labels": self.labels[index]}


class Counts(TrainerCallback):
    """Micro-batches: every substep (a batch that accumulates) and every step (a batch that
    ends with the optimizer's update); evaluation batches: every prediction step."""

    def __init__(self):
        self.train_batches = self.eval_batches = self.optimizer_steps = 0

    def on_substep_end(self, args, state, control, **kwargs):
        self.train_batches += 1

    def on_step_end(self, args, state, control, **kwargs):
        self.train_batches += 1
        self.optimizer_steps += 1

    def on_prediction_step(self, args, state, control, **kwargs):
        self.eval_batches += 1


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--accumulate", type=int, default=1)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--samples", type=int, default=128)
    parser.add_argument("--batch-size", type=int, default=8)
    args = parser.parse_args()

    hf_logging.set_verbosity_error()
    torch.manual_seed(0)
    config = BertConfig(vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=LENGTH, num_labels=2)
    model = BertForSequenceClassification(config)
    counts = Counts()
    with tempfile.TemporaryDirectory() as output_dir:
        training = TrainingArguments(
            output_dir=output_dir, num_train_epochs=args.epochs, per_device_train_batch_size=args.batch_size,
            per_device_eval_batch_size=args.batch_size, gradient_accumulation_steps=args.accumulate,
            eval_strategy="epoch", save_strategy="no", logging_strategy="no", report_to=[], use_cpu=True,
            dataloader_num_workers=0, disable_tqdm=True, learning_rate=1e-3, seed=0)
        trainer = Trainer(model=model, args=training, train_dataset=Sentences(args.samples, 1),
                          eval_dataset=Sentences(args.samples // 4, 2), callbacks=[counts])
        trainer.train()
    print(f"train_batches={counts.train_batches} eval_batches={counts.eval_batches} "
          f"optimizer_steps={counts.optimizer_steps}")


if __name__ == "__main__":
    main()
