"""Training: one loop for the three tasks, resumable, seeded, reporting through a callback.

The loop keeps two directories: ``work_dir`` (e.g. ``runs/translator``) holds the resumable
state (latest weights, optimiser moments, progress) and per-epoch snapshots; ``out_dir`` (the
shipped ``checkpoints/<task>``) receives the best model so far, its probe-attention history and
its measured results. Everything is safetensors + JSON: nothing is pickled.
"""

from __future__ import annotations

import math
import random
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import save_file
from torch import nn

from model.core.checkpoint import default_dir
from model.core.devices import pick_device  # noqa: F401 - also imported from here (CLI, pages, benches)
from model.training import recipes
from model.training.averaging import average_snapshots, load_mean  # noqa: F401 - also imported from here
from model.training.records import ship, snapshot_probe  # noqa: F401 - also imported from here
from model.training.start import (  # noqa: F401 - also imported from here (tests, the CLI)
    freeze,
    param_groups,
    positions_at_word_scale,
    start_from,
)
from model.training.state import load_state, save_state

Progress = Callable[[dict[str, Any]], None]


OBJECTIVES = recipes.OBJECTIVES
POS_INITS = ("default", "word")


def prefixes(text: str) -> str:
    """``text`` as comma-separated parameter-name prefixes (``"pos_emb,blocks.0."``), refused when one is not a
    name's start (letters, digits, ``_`` and ``.``); which names a model has is checked when it is built."""
    for part in (p.strip() for p in text.split(",")):
        if part and not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.]*", part):
            raise ValueError(f"{part!r} is not the start of a parameter name")
    return text


def option(default: Any, help: str, **cli: Any) -> Any:
    """A field with its command-line help (``python -m model train`` makes one flag a field from it); ``cli`` may
    give the flag's ``flag`` name, ``choices``, ``check`` (a function that returns the value or raises
    ValueError) or ``cli=False`` (no flag)."""
    if callable(default):
        return field(default_factory=default, metadata={"help": help, **cli})
    return field(default=default, metadata={"help": help, **cli})


@dataclass
class TrainConfig:
    """One training run's settings, saved in its checkpoint's ``training`` record; the defaults are a plain run's,
    and each shipped model's own are in its recipe (model/recipes/<task>.json)."""

    task: str = field(metadata={"help": "classifier, generator or translator", "cli": False})
    data_dir: str | None = option(None, "dataset directory (default: $ATTENTION_DATA_DIR or the shared data)")
    out_dir: str | None = option(None, "where the best checkpoint goes (default: checkpoints/<task>)", flag="out")
    work_dir: str | None = option(None, "resumable state and snapshots (default: runs/<task>)", flag="work")
    epochs: int = option(10, "passes over the data (the generator counts 'epochs' of --eval-every steps)")
    batch_size: int = option(64, "sentences (classifier, generator windows) or target tokens (translator) a step")
    lr: float = option(5e-4, "peak learning rate")
    warmup: int = option(200, "linear warm-up steps, then cosine decay to lr times --min-lr-ratio")
    min_lr_ratio: float = option(0.1, "where the cosine decay ends, as a share of lr")
    weight_decay: float = option(0.01, "AdamW's weight decay on matrices (vectors never decay)")
    label_smoothing: float = option(0.0, "label smoothing of the task's cross-entropy")
    grad_clip: float = option(1.0, "clip the gradient's norm to this (0: no clipping)")
    eval_every: int = option(0, "steps between validations; 0: once a pass (the generator: 500)")
    seed: int = option(1234, "random seed (weights, batches, masks)")
    device: str = option("auto", "auto (CUDA, then MPS, then CPU), cpu, cuda, mps")
    threads: int = option(0, "torch CPU threads; 0: torch's default")
    average_last: int = option(0, "also try the mean of the last N epoch snapshots, shipped if it scores higher")
    max_minutes: float = option(0.0, "stop (keeping the best) after this much wall time; 0: no limit")
    init_from: str | None = option(None, "start from these weights (a model.safetensors or a folder holding one)")
    keep_snapshots: bool = option(False, "keep every evaluation's weights in the work folder (epochNNN.safetensors)")
    repeat_share: float = option(0.0, "generator: share of windows holding a span written twice (Olsson et al. 2022)")
    card: str = option("", "how it was trained, in words (data, objective, starting weights): the model card's line")
    objective: str = option(
        "task",
        "task; mlm: the classifier's encoder as a masked language model; task+mlm: the masked-LM loss kept beside "
        "the task's (classifier, translator); task+distill: a teacher classifier's answers beside the labels",
        choices=OBJECTIVES,
    )
    pos_init: str = option(
        "default", "word: positional embeddings start at the scaled word embeddings' size", choices=POS_INITS
    )
    mlm_weight: float = option(1.0, "objective task+mlm: the masked-LM loss's weight beside the task's")
    layer_decay: float = option(1.0, "each block down from the top learns at this times the rate above it (ULMFiT)")
    teacher: str | None = option(None, "objective task+distill: the classifier checkpoint whose answers are learned")
    distill_weight: float = option(0.5, "objective task+distill: the soft targets' share of the loss")
    temperature: float = option(2.0, "objective task+distill: the softmax temperature of the soft targets")
    lexicon: str | None = option(None, "classifier: a rated word list (VADER's format) added as one-word examples")
    freeze: str = option(
        "", "comma-separated parameter-name prefixes kept as they start, e.g. pos_emb,blocks.0.", check=prefixes
    )
    model: dict[str, Any] = option(dict, "overrides of the model config", cli=False)

    def __post_init__(self) -> None:  # the objective is checked with the task (model.training.recipes.get)
        if self.pos_init not in POS_INITS:
            raise ValueError(f"pos_init {self.pos_init!r}: 'default' or 'word'")
        prefixes(self.freeze)


def seed_everything(seed: int) -> None:
    random.seed(seed)
    torch.manual_seed(seed)


def lr_at(step: int, total: int, cfg: TrainConfig, time_frac: float = 0.0) -> float:
    """Linear warm-up, then cosine decay over the steps or, if later, over the time budget.

    With ``max_minutes`` set, ``time_frac`` (elapsed / budget) drives the decay whenever it runs
    ahead of the step count, so a run cut short by its budget still ends at a low rate.
    """
    if step < cfg.warmup:
        return cfg.lr * (step + 1) / cfg.warmup
    frac = min(1.0, max((step - cfg.warmup) / max(1, total - cfg.warmup), time_frac))
    return cfg.lr * (cfg.min_lr_ratio + (1 - cfg.min_lr_ratio) * 0.5 * (1 + math.cos(math.pi * frac)))


def train(cfg: TrainConfig, on_progress: Progress | None = None) -> dict[str, Any]:
    """Train ``cfg.task``; returns the best validation results. Resumes from ``work_dir``."""
    run = Run.start(cfg, on_progress or (lambda info: None))
    while run.progress["epoch"] < cfg.epochs:
        losses, tokens, t0 = run.epoch()
        if not run.close_epoch(losses, tokens, t0):
            break
    if cfg.average_last:
        run.try_average()
    return run.progress["best"]


@dataclass(eq=False)
class Run:
    """One training run under way: the recipe and its data, the model and optimiser, the folders, and
    ``progress`` (step, epoch, best, history, seconds), which is what resumes."""

    cfg: TrainConfig
    task: Any
    bundle: dict[str, Any]
    model: nn.Module
    opt: torch.optim.Optimizer
    work: Path
    out: Path
    progress: dict[str, Any]
    report: Progress
    steps_per_epoch: int
    probes: dict[str, Any]
    start_time: float = field(default_factory=time.time)

    @classmethod
    def start(cls, cfg: TrainConfig, report: Progress) -> Run:
        """Seed, build the model where its settings say it starts, and load the saved state if there is one."""
        if cfg.threads:
            torch.set_num_threads(cfg.threads)
        seed_everything(cfg.seed)
        device = pick_device(cfg.device)
        task = recipes.get(cfg.task, cfg.objective)
        bundle = task.prepare(cfg)
        model = task.build(bundle, cfg).to(device)
        if cfg.pos_init == "word":
            positions_at_word_scale(model)
        if cfg.init_from and not (Path(cfg.work_dir or Path("runs") / cfg.task) / "state.json").exists():
            start_from(model, cfg.init_from)
        freeze(model, cfg.freeze)
        opt = torch.optim.AdamW(param_groups(model, cfg.weight_decay, cfg.layer_decay), lr=cfg.lr, betas=(0.9, 0.98))
        work = Path(cfg.work_dir or Path("runs") / cfg.task)
        out = Path(cfg.out_dir or default_dir(cfg.task))
        work.mkdir(parents=True, exist_ok=True)
        progress = load_state(work, model, opt) or {"step": 0, "epoch": 0, "best": None, "history": [], "seconds": 0.0}
        if progress["step"]:
            report({"event": "resume", "step": progress["step"], "epoch": progress["epoch"]})
        steps = task.steps_per_epoch(bundle, cfg)
        n_params = sum(p.numel() for p in model.parameters())
        report({"event": "start", "params": n_params, "device": str(device), "total_steps": steps * cfg.epochs})
        return cls(cfg, task, bundle, model, opt, work, out, progress, report, steps, task.probes(bundle))

    @property
    def total(self) -> int:
        return self.steps_per_epoch * self.cfg.epochs

    def seconds(self) -> float:
        """Training time so far, the sittings before this one included."""
        return self.progress["seconds"] + time.time() - self.start_time

    def epoch(self) -> tuple[list[float], int, float]:
        """One pass of training steps (the rest of one, when resuming mid-epoch); returns each step's loss,
        the tokens read and when the pass began."""
        cfg, progress, device = self.cfg, self.progress, next(self.model.parameters()).device
        epoch = progress["epoch"]
        self.model.train()
        gen = torch.Generator().manual_seed(cfg.seed + epoch)
        tokens, t0, losses = 0, time.time(), []
        done_in_epoch = progress["step"] - epoch * self.steps_per_epoch
        for i, batch in enumerate(self.task.batches(self.bundle, cfg, gen, self.steps_per_epoch)):
            if i < done_in_epoch:
                continue  # resuming mid-epoch: skip batches already seen (same seeded order)
            time_frac = self.seconds() / (cfg.max_minutes * 60) if cfg.max_minutes else 0.0
            rate = lr_at(progress["step"], self.total, cfg, time_frac)
            loss, n_tok = self.step([b.to(device) for b in batch], rate)
            tokens += n_tok
            losses.append(loss)
            speed = tokens / max(time.time() - t0, 1e-9)
            step = {"step": progress["step"], "total": self.total, "loss": loss, "tokens_per_s": speed, "lr": rate}
            self.report({"event": "step", **step})
            if cfg.max_minutes and self.seconds() > cfg.max_minutes * 60:
                break
        return losses, tokens, t0

    def step(self, batch: list[torch.Tensor], rate: float) -> tuple[float, int]:
        """One optimiser step at learning rate ``rate``; returns the loss and the tokens read."""
        for g in self.opt.param_groups:
            g["lr"] = rate * g["lr_scale"]
        loss, n_tok = self.task.loss(self.model, batch, self.cfg)
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        if self.cfg.grad_clip:
            nn.utils.clip_grad_norm_(self.model.parameters(), self.cfg.grad_clip)
        self.opt.step()
        self.progress["step"] += 1
        return loss.item(), n_tok

    def close_epoch(self, losses: list[float], tokens: int, t0: float) -> bool:
        """Validate, record the probes and a snapshot, ship a new best and save the state; False when the
        time budget is spent."""
        cfg, progress, model = self.cfg, self.progress, self.model
        progress["epoch"] += 1
        progress["seconds"] = self.seconds()
        self.start_time, base = time.time(), progress["seconds"]  # seconds() counts from here on
        metrics = self.task.evaluate(model, self.bundle, cfg)
        metrics.update(
            epoch=progress["epoch"],
            step=progress["step"],
            train_loss=sum(losses) / max(1, len(losses)),
            tokens_per_s=tokens / max(time.time() - t0, 1e-9),
            seconds=round(base, 1),
        )
        progress["history"].append(metrics)
        self.report({"event": "eval", **metrics})
        snapshot_probe(self.out, model, self.probes, self.task, progress["epoch"], metrics)
        if cfg.average_last or cfg.keep_snapshots:
            save_file(
                {k: v.detach().contiguous().cpu().clone() for k, v in model.state_dict().items()},
                str(self.work / f"epoch{progress['epoch']:03d}.safetensors"),
            )
        if progress["best"] is None or metrics["score"] > progress["best"]["score"]:
            progress["best"] = metrics
            ship(self.out, model, self.bundle, cfg, self.task, metrics, progress["history"])
        save_state(self.work, model, self.opt, progress)
        if cfg.max_minutes and progress["seconds"] > cfg.max_minutes * 60:
            self.report({"event": "time_limit", "minutes": cfg.max_minutes})
            return False
        return True

    def try_average(self) -> None:
        """Score the mean of the last ``average_last`` snapshots; it ships if it beats the best epoch."""
        progress = self.progress
        averaged = average_snapshots(self.work, self.model, self.cfg.average_last)
        if averaged:
            metrics = self.task.evaluate(self.model, self.bundle, self.cfg)
            metrics.update(epoch=progress["epoch"], averaged_last=averaged, seconds=round(progress["seconds"], 1))
            self.report({"event": "eval_average", **metrics})
            if metrics["score"] > progress["best"]["score"]:
                progress["best"] = metrics
                ship(self.out, self.model, self.bundle, self.cfg, self.task, metrics, progress["history"])
            save_state(self.work, self.model, self.opt, progress)  # the averaged weights are what ships next
