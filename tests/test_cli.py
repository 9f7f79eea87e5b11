"""The command line on tiny datasets: `python -m model train` writes a loadable best checkpoint and
resumes, `python -m model evaluate` prints one JSON object per task; the BLEU it reports."""

from __future__ import annotations

import gzip
import json
import math
from pathlib import Path

import pytest
import sacrebleu
import torch
from safetensors.torch import load_file

from model.__main__ import main
from model.core.checkpoint import load_checkpoint
from model.training.evaluate import bleu_scores, corpus_bleu

PAIRS = [
    ("ein mann fährt fahrrad .", "a man rides a bike ."),
    ("zwei hunde spielen im schnee .", "two dogs play in the snow ."),
    ("eine frau liest ein buch .", "a woman reads a book ."),
    ("ein kind spielt im park .", "a child plays in the park ."),
]
SST = ["1 a good and moving film", "0 a dull and boring film", "1 wonderful acting", "0 awful plot"]
SHAKESPEARE = "ROMEO:\nWhat light through yonder window breaks?\n\nJULIET:\nO Romeo, Romeo!\n" * 6

# small enough to train in seconds; every task's defaults are overridden
TINY = {
    "classifier": ["--set", "dim=16", "--set", "heads=2", "--set", "ff_dim=32", "--batch-size", "4"],
    "generator": [
        "--set",
        "dim=16",
        "--set",
        "heads=2",
        "--set",
        "layers=1",
        "--set",
        "ff_dim=32",
        "--set",
        "block_size=16",
        "--batch-size",
        "4",
        "--eval-every",
        "5",
    ],
    "translator": [
        "--set",
        "dim=16",
        "--set",
        "heads=2",
        "--set",
        "enc_layers=1",
        "--set",
        "dec_layers=1",
        "--set",
        "ff_dim=32",
        "--set",
        "min_freq=1",
        "--batch-size",
        "60",
        "--average-last",
        "2",
    ],
}


def write_gz(path: Path, lines: list[str]) -> None:
    with gzip.open(path, "wt", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("data")
    (root / "sst2").mkdir()
    for split in ("train", "dev"):
        (root / "sst2" / f"{split}.txt").write_text("\n".join(SST * 3) + "\n", encoding="utf-8")
    (root / "tinyshakespeare").mkdir()
    (root / "tinyshakespeare" / "input.txt").write_text(SHAKESPEARE, encoding="utf-8")
    (root / "multi30k").mkdir()
    for split in ("train", "val", "test_2016_flickr"):
        write_gz(root / "multi30k" / f"{split}.de.gz", [de for de, _ in PAIRS])
        write_gz(root / "multi30k" / f"{split}.en.gz", [en for _, en in PAIRS])
    return root


def train(task: str, data: Path, out: Path, work: Path, *extra: str) -> dict:
    argv = [
        "train",
        task,
        "--data-dir",
        str(data),
        "--out",
        str(out),
        "--work",
        str(work),
        "--device",
        "cpu",
        "--warmup",
        "1",
        "--lr",
        "3e-3",
        *TINY[task],
        *extra,
    ]
    main(argv)
    return json.loads((work / "state.json").read_text())


def evaluate(task: str, checkpoint: Path, capsys, *args: str) -> dict:
    capsys.readouterr()
    main(["evaluate", task, "--checkpoint", str(checkpoint), "--device", "cpu", *args])
    out = capsys.readouterr().out.strip().splitlines()
    assert len(out) == 1, f"evaluate printed more than one line: {out}"
    return json.loads(out[0])


@pytest.mark.parametrize("task", ["classifier", "generator", "translator"])
def test_train_then_resume_then_evaluate(task: str, data: Path, tmp_path: Path, capsys) -> None:
    out, work = tmp_path / "out", tmp_path / "work"
    first = train(task, data, out, work, "--epochs", "2")
    assert first["epoch"] == 2 and len(first["history"]) == 2
    ck = load_checkpoint(out, task=task, device="cpu")
    assert ck.training["epochs"] == 2 and ck.results["epoch"] in (1, 2)
    assert (out / "history.json").exists() and (out / "history.safetensors").exists()

    # the same command with more epochs continues from the saved state instead of starting over
    second = train(task, data, out, work, "--epochs", "3")
    assert second["epoch"] == 3
    assert second["history"][:2] == first["history"]
    assert second["step"] > first["step"]

    if task == "classifier":
        result = evaluate(task, out, capsys, "--data", str(data / "sst2" / "dev.txt"))
        assert 0.0 <= result["accuracy"] <= 1.0 and result["examples"] == len(SST) * 3
    elif task == "generator":
        text = data / "tinyshakespeare" / "input.txt"
        whole = evaluate(task, out, capsys, "--text", str(text))
        tail = evaluate(task, out, capsys, "--text", str(text), "--tail", "0.1")
        assert whole["characters"] == len(SHAKESPEARE)
        assert tail["characters"] == len(SHAKESPEARE) - int(0.9 * len(SHAKESPEARE))
        for r in (whole, tail):
            assert r["loss"] > 0 and math.isclose(r["bpc"], r["loss"] / math.log(2), abs_tol=1e-3)
    else:
        src, ref = data / "multi30k" / "test_2016_flickr.de.gz", data / "multi30k" / "test_2016_flickr.en.gz"
        greedy = evaluate(task, out, capsys, "--src", str(src), "--ref", str(ref))
        beam = evaluate(task, out, capsys, "--src", str(src), "--ref", str(ref), "--beam", "3")
        for r in (greedy, beam):
            assert set(r) >= {"bleu", "sacrebleu"} and 0 <= r["bleu"] <= 100 and 0 <= r["sacrebleu"] <= 100


def test_the_translator_can_keep_a_snapshot_every_few_steps(data: Path, tmp_path: Path) -> None:
    from model.training import recipes
    from model.training.train import TrainConfig

    cfg = TrainConfig(task="translator", data_dir=str(data), batch_size=20, model={"min_freq": 1})
    recipe = recipes.get("translator")
    full = recipe.steps_per_epoch(recipe.prepare(cfg), cfg)
    assert full >= 2  # the tiny data makes more than one batch a pass
    out, work = tmp_path / "out", tmp_path / "work"
    small = ("--batch-size", "20", "--eval-every")
    state = train("translator", data, out, work, "--epochs", "3", *small, "1", "--keep-snapshots")
    assert state["step"] == 3 and [h["epoch"] for h in state["history"]] == [1, 2, 3]
    assert sorted(p.name for p in work.glob("epoch*.safetensors")) == [f"epoch00{e}.safetensors" for e in (1, 2, 3)]
    more = train("translator", data, tmp_path / "o2", tmp_path / "w2", "--epochs", "1", *small, str(full + 5))
    assert more["step"] == full  # never more than a pass


def test_average_ships_the_mean_of_the_chosen_snapshots(data: Path, tmp_path: Path, capsys) -> None:
    out, work, avg = tmp_path / "out", tmp_path / "work", tmp_path / "avg"
    train("translator", data, out, work, "--epochs", "3")
    snaps = [load_file(str(work / f"epoch{e:03d}.safetensors")) for e in (2, 3)]
    src, ref = data / "multi30k" / "val.de.gz", data / "multi30k" / "val.en.gz"
    capsys.readouterr()
    main(
        [
            "average",
            "translator",
            "--epochs",
            "2-3",
            "--work",
            str(work),
            "--base",
            str(out),
            "--out",
            str(avg),
            "--src",
            str(src),
            "--ref",
            str(ref),
        ]
    )
    printed = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert printed["averaged_epochs"] == [2, 3] and 0 <= printed["val_bleu"] <= 100

    ck = load_checkpoint(avg, task="translator", device="cpu")
    assert ck.training["averaged_epochs"] == [2, 3] and ck.results["val_bleu"] == printed["val_bleu"]
    state = ck.model.state_dict()
    name = next(k for k in snaps[0] if k.endswith("weight") and snaps[0][k].ne(snaps[1][k]).any())
    assert torch.allclose(state[name], (snaps[0][name] + snaps[1][name]) / 2, atol=1e-6)

    with pytest.raises(SystemExit, match="epoch009"):
        main(["average", "translator", "--epochs", "8-9", "--work", str(work), "--base", str(out), "--out", str(avg)])


def test_average_of_checkpoints_ships_their_mean_and_its_accuracy(data: Path, tmp_path: Path, capsys) -> None:
    start = tmp_path / "start"
    train("classifier", data, start, tmp_path / "w0", "--epochs", "1")
    runs = [tmp_path / f"ft{seed}" for seed in (1, 2)]
    for seed, run in zip((1, 2), runs):
        train("classifier", data, run, tmp_path / f"w{seed}", "--init-from", str(start), "--seed", str(seed))
    weights = [load_file(str(r / "model.safetensors")) for r in runs]
    soup, dev = tmp_path / "soup", data / "sst2" / "dev.txt"
    capsys.readouterr()
    main(["average", "classifier", "--checkpoints", *map(str, runs), "--out", str(soup), "--data", str(dev)])
    printed = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert printed["averaged_checkpoints"] == [str(r) for r in runs]
    ck = load_checkpoint(soup, task="classifier")
    for name, value in ck.model.state_dict().items():
        torch.testing.assert_close(value, (weights[0][name] + weights[1][name]) / 2)
    assert printed["dev_accuracy"] == evaluate("classifier", soup, capsys, "--data", str(dev))["accuracy"]
    assert ck.training["averaged_checkpoints"] == printed["averaged_checkpoints"]
    with pytest.raises(SystemExit, match="not both"):
        main(["average", "classifier", "--checkpoints", str(runs[0]), "--epochs", "1", "--out", str(soup)])
    with pytest.raises(SystemExit, match="model.safetensors"):
        main(
            [
                "average",
                "classifier",
                "--checkpoints",
                str(tmp_path / "nowhere"),
                "--base",
                str(start),
                "--out",
                str(soup),
            ]
        )


def test_evaluate_without_its_files_says_what_it_needs(tmp_path: Path) -> None:
    from fixtures.tiny import make_checkpoints

    root = make_checkpoints(tmp_path)
    for task, needs in (("translator", "--src"), ("classifier", "--data"), ("generator", "--text")):
        with pytest.raises(SystemExit, match=needs):
            main(["evaluate", task, "--checkpoint", str(root / task)])


def test_bleu_is_100_for_perfect_output_and_0_without_a_shared_4_gram() -> None:
    refs = [en.split() for _, en in PAIRS]
    assert corpus_bleu(refs, refs) == pytest.approx(100.0)
    assert corpus_bleu([["a", "b", "c"]] * 4, refs) == 0.0


def test_bleu_pools_counts_over_the_corpus_with_a_brevity_penalty() -> None:
    cand = [["the", "cat", "sat", "on", "the", "mat"], ["a", "dog", "runs", "in", "the", "park"]]
    ref = [["the", "cat", "sat", "on", "a", "mat"], ["a", "dog", "runs", "in", "the", "big", "park"]]
    # clipped matches per order: 1-gram 5+6, 2-gram 3+4, 3-gram 2+3, 4-gram 1+2; totals 12, 10, 8, 6
    precisions = [11 / 12, 7 / 10, 5 / 8, 3 / 6]
    brevity = math.exp(1 - 13 / 12)
    expected = 100 * brevity * math.exp(sum(map(math.log, precisions)) / 4)
    assert corpus_bleu(cand, ref) == pytest.approx(expected)


def test_sacrebleu_is_computed_on_detokenised_lowercased_text() -> None:
    hyps = [["a", "man", "rides", "a", "bike", "."], ["two", "dogs", "play", "in", "snow", "."]]
    refs = ["A man rides a bike.", "Two dogs play in the snow."]
    scores = bleu_scores(hyps, refs)
    expected = sacrebleu.corpus_bleu(["a man rides a bike.", "two dogs play in snow."], [[r.lower() for r in refs]])
    assert scores["sacrebleu"] == pytest.approx(round(expected.score, 2))
    assert 0 < scores["bleu"] < 100
