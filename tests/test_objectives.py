"""The training objectives beside the task's own: the classifier's ``mlm`` (its encoder pretrained as a masked
language model), ``task+mlm`` (the classifier, or the translator's encoder, trained with a masked-LM loss kept
beside the task's loss) and ``task+distill``, end to end on tiny data, and each combined loss against its
definition."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F
from safetensors.torch import load_file

from model.__main__ import TRAIN_OPTIONS
from model.core.checkpoint import load_checkpoint
from model.core.tokenize import Vocab
from model.nets.classifier import Classifier, ClassifierConfig, MaskedLM
from model.training import recipes
from model.training.train import TrainConfig
from tests.test_cli import data, evaluate, train  # noqa: F401  (data is a fixture)

SMALL = ClassifierConfig(vocab_size=40, dim=16, heads=2, layers=1, ff_dim=32, max_len=12, dropout=0.0)


def test_the_cli_takes_the_mlm_weight():
    assert ("mlm-weight", float) in TRAIN_OPTIONS
    assert {("teacher", str), ("distill-weight", float), ("temperature", float)} <= set(TRAIN_OPTIONS)


def test_objectives_are_the_classifiers_only():
    assert isinstance(recipes.get("classifier", "task+mlm"), recipes.ClassifierWithMLMRecipe)
    assert isinstance(recipes.get("translator", "task+mlm"), recipes.TranslatorWithMLMRecipe)
    with pytest.raises(ValueError, match="task\\+mlm is for the classifier and translator only"):
        recipes.get("generator", "task+mlm")
    with pytest.raises(ValueError, match="mlm is for the classifier only"):
        recipes.get("translator", "mlm")
    with pytest.raises(ValueError, match=r"task, mlm, task\+mlm or task\+distill"):
        recipes.get("classifier", "contrastive")


def test_the_combined_loss_is_the_task_loss_plus_the_weighted_masked_loss():
    torch.manual_seed(0)
    model = MaskedLM(SMALL).eval()
    ids, y = torch.randint(4, 40, (3, 7)), torch.tensor([0, 1, 1])
    x = torch.randint(4, 40, (3, 9))
    target = torch.full_like(x, -100)
    target[0, 2], target[1, 5], target[2, 0] = 11, 23, 7
    cfg = TrainConfig(task="classifier", objective="task+mlm", mlm_weight=0.25, label_smoothing=0.1)
    got, n = recipes.ClassifierWithMLMRecipe().loss(model, (ids, y, x, target), cfg)
    logits, _ = model(ids)
    task = F.cross_entropy(logits, y, label_smoothing=0.1)
    words = model.masked_logits(x)
    # brute force: the mean over the three predicted positions of -log p(word)
    mlm = -sum(F.log_softmax(words[b, t], -1)[w] for b, t, w in ((0, 2, 11), (1, 5, 23), (2, 0, 7))) / 3
    torch.testing.assert_close(got, task + 0.25 * mlm)
    assert n == ids.numel() + x.numel()  # no padding in either batch


def test_the_shipped_classifier_is_the_trained_one_without_the_masked_lm_bias():
    torch.manual_seed(1)
    model = MaskedLM(SMALL).eval()
    with torch.no_grad():
        model.mlm_bias.normal_()
    shipped = recipes.ClassifierWithMLMRecipe().shipped(model)
    assert type(shipped) is Classifier and "mlm_bias" not in shipped.state_dict()
    ids = torch.randint(4, 40, (2, 6))
    torch.testing.assert_close(shipped.eval()(ids)[0], model(ids)[0])


def test_pretrain_then_fine_tune_with_the_masked_loss_ships_a_classifier(data, tmp_path, capsys):  # noqa: F811
    mlm_out = tmp_path / "mlm" / "out"
    train("classifier", data, mlm_out, tmp_path / "mlm" / "work", "--objective", "mlm", "--epochs", "1")
    assert "mlm_bias" in load_file(str(mlm_out / "model.safetensors"))
    out, work = tmp_path / "ft" / "out", tmp_path / "ft" / "work"
    state = train(
        "classifier",
        data,
        out,
        work,
        "--objective",
        "task+mlm",
        "--mlm-weight",
        "0.5",
        "--init-from",
        str(mlm_out),
        "--epochs",
        "2",
        "--keep-snapshots",
    )
    assert [h["epoch"] for h in state["history"]] == [1, 2]
    assert all("dev_accuracy" in h for h in state["history"])  # validated as the classifier
    ck = load_checkpoint(out, task="classifier")  # loads strictly: no masked-LM bias left in it
    assert type(ck.model) is Classifier
    assert ck.training["objective"] == "task+mlm" and ck.training["mlm_weight"] == 0.5
    assert ck.training["params"] == sum(p.numel() for p in ck.model.parameters())
    meta = json.loads((out / "config.json").read_text())
    assert meta["results"]["dev_accuracy"] == max(h["dev_accuracy"] for h in state["history"])
    result = evaluate("classifier", out, capsys, "--data", str(Path(data) / "sst2" / "dev.txt"))
    assert result["accuracy"] == meta["results"]["dev_accuracy"]
    # the encoder started from the pretrained one (the masked-LM bias moved on from it, so it trained too)
    snap = load_file(str(work / "epoch002.safetensors"))
    assert not torch.equal(snap["mlm_bias"], load_file(str(mlm_out / "model.safetensors"))["mlm_bias"])


def test_the_soft_target_loss_is_hintons_kl_at_temperature():
    torch.manual_seed(2)
    student, teacher = torch.randn(4, 2), torch.randn(4, 2) * 3
    t = 2.5
    # brute force: for each row, sum over classes of p log(p / q), p and q the tempered softmaxes
    kl = 0.0
    for s_row, t_row in zip(student.tolist(), teacher.tolist()):
        p = [torch.tensor(v / t).exp().item() for v in t_row]
        q = [torch.tensor(v / t).exp().item() for v in s_row]
        p, q = [v / sum(p) for v in p], [v / sum(q) for v in q]
        kl += sum(pi * torch.tensor(pi / qi).log().item() for pi, qi in zip(p, q))
    got = recipes.distillation_loss(student, teacher, t)
    torch.testing.assert_close(got, torch.tensor(kl / 4 * t * t), rtol=1e-5, atol=1e-6)
    assert recipes.distillation_loss(teacher, teacher, t).abs() < 1e-6  # a student that answers as taught


def test_the_distilled_loss_mixes_the_labelled_loss_and_the_soft_targets_on_both_batches():
    torch.manual_seed(3)
    student, teacher = Classifier(SMALL).eval(), Classifier(SMALL).eval()
    recipe = recipes.DistilledClassifierRecipe(teacher=teacher)
    ids, y = torch.randint(4, 40, (3, 5)), torch.tensor([1, 0, 1])
    extra = torch.randint(4, 40, (2, 8))
    cfg = TrainConfig(task="classifier", objective="task+distill", distill_weight=0.3, temperature=2.0)
    got, n = recipe.loss(student, (ids, y, extra), cfg)
    both = torch.cat([F.pad(ids, (0, 3)), extra])  # the labelled rows padded to the other rows' width
    s_logits, t_logits = student(both)[0], teacher(both)[0]
    task = F.cross_entropy(s_logits[:3], y, label_smoothing=cfg.label_smoothing)
    soft = (
        F.kl_div(
            F.log_softmax(s_logits / 2, -1), F.log_softmax(t_logits / 2, -1), log_target=True, reduction="batchmean"
        )
        * 4
    )
    torch.testing.assert_close(got, 0.7 * task + 0.3 * soft)
    assert n == ids.numel() + extra.numel()
    assert all(p.grad is None for p in teacher.parameters())


def test_distillation_needs_a_teacher_with_the_same_vocabulary(data, tmp_path):  # noqa: F811
    cfg = TrainConfig(task="classifier", objective="task+distill", data_dir=data)
    with pytest.raises(ValueError, match="needs --teacher"):
        recipes.get("classifier", "task+distill").prepare(cfg)
    other = tmp_path / "other"
    train("classifier", data, other, tmp_path / "w0", "--epochs", "1")
    meta = json.loads((other / "config.json").read_text())
    meta["vocabs"]["words"] = [*meta["vocabs"]["words"][:-1], "zzz-not-in-sst2"]
    (other / "config.json").write_text(json.dumps(meta))
    cfg = TrainConfig(task="classifier", objective="task+distill", data_dir=data, teacher=str(other))
    with pytest.raises(ValueError, match="vocabulary is not this classifier's"):
        recipes.get("classifier", "task+distill").prepare(cfg)


def test_fine_tune_from_a_teacher_ships_a_classifier_and_leaves_the_teacher_as_it_was(data, tmp_path, capsys):  # noqa: F811
    teacher = tmp_path / "teacher"
    train("classifier", data, teacher, tmp_path / "tw", "--epochs", "1")
    before = load_file(str(teacher / "model.safetensors"))
    out = tmp_path / "student"
    state = train(
        "classifier",
        data,
        out,
        tmp_path / "sw",
        "--objective",
        "task+distill",
        "--teacher",
        str(teacher),
        "--distill-weight",
        "0.6",
        "--temperature",
        "3",
        "--epochs",
        "2",
    )
    assert [h["epoch"] for h in state["history"]] == [1, 2] and all("dev_accuracy" in h for h in state["history"])
    ck = load_checkpoint(out, task="classifier")
    assert ck.training["teacher"] == str(teacher) and ck.training["distill_weight"] == 0.6
    assert ck.training["temperature"] == 3.0
    after = load_file(str(teacher / "model.safetensors"))
    assert all(torch.equal(before[k], after[k]) for k in before)
    result = evaluate("classifier", out, capsys, "--data", str(Path(data) / "sst2" / "dev.txt"))
    assert result["accuracy"] == json.loads((out / "config.json").read_text())["results"]["dev_accuracy"]


def test_rated_words_become_one_word_examples_in_the_sentences_vocabulary(tmp_path):
    lexicon = tmp_path / "lexicon.txt"
    lexicon.write_text(
        "good\t1.9\t0.9\t[2, 1]\nbad\t-2.5\t0.6\t[-3, -2]\nfine\t0.8\t0.4\t[1, 1]\n"
        "awful\t-2.0\t0.5\t[-2, -2]\nzesty\t2.2\t0.5\t[2, 2]\nnot a rating line\n",
        encoding="utf-8",
    )
    vocab = Vocab(["<pad>", "<unk>", "<bos>", "<eos>", "good", "bad", "fine", "awful", "film"])
    got = recipes.lexicon_examples(str(lexicon), vocab)
    # |mean| >= 1 and a word of the vocabulary: fine (0.8) is too weak, zesty is not a word it holds
    assert got == [(1, ["good"]), (0, ["bad"]), (0, ["awful"])]
    with pytest.raises(ValueError, match="no rated word"):
        recipes.lexicon_examples(str(lexicon), Vocab(["<pad>", "<unk>", "<bos>", "<eos>", "film"]))


def test_a_lexicon_adds_examples_but_leaves_the_vocabulary_as_the_sentences_make_it(data, tmp_path):  # noqa: F811
    plain = recipes.get("classifier").prepare(TrainConfig(task="classifier", data_dir=data))
    word = plain["vocab"].itos[-1]  # the rarest word: one more count would move it in a vocabulary built on both
    lexicon = tmp_path / "lexicon.txt"
    lexicon.write_text(f"{word}\t-3.0\t0.5\t[-3]\nnot-in-sst2\t3.0\t0.5\t[3]\n", encoding="utf-8")
    cfg = TrainConfig(task="classifier", data_dir=data, lexicon=str(lexicon))
    b = recipes.get("classifier").prepare(cfg)
    assert b["vocab"].itos == plain["vocab"].itos
    assert b["train"] == plain["train"] + [(0, [word])]


def test_masking_hides_only_words_at_berts_rates():
    gen = torch.Generator().manual_seed(0)
    ids = torch.randint(4, 500, (400, 50))
    ids[:, 0], ids[:, -1], ids[:, -5:-1] = 2, 3, 0  # <sos>, <eos>, padding
    x, target = recipes.mask_words(ids, 500, gen)
    picked = target != -100
    assert not picked[ids <= 3].any() and torch.equal(target[picked], ids[picked])
    assert torch.equal(x[~picked], ids[~picked])
    share = picked.sum() / (ids > 3).sum()
    assert abs(share - recipes.MLM_SHARE) < 0.01
    hidden = (x[picked] == 1).float().mean()  # <unk>
    kept = (x[picked] == ids[picked]).float().mean()
    assert abs(hidden - 0.8) < 0.02 and abs(kept - 0.1) < 0.02 and (x[picked] >= 1).all()


def test_the_translators_combined_loss_adds_the_weighted_masked_loss_of_its_source():
    from model.nets.translator import TranslatorConfig, TranslatorWithMLM

    torch.manual_seed(4)
    cfg_m = TranslatorConfig(
        src_vocab_size=30, tgt_vocab_size=25, dim=16, heads=2, enc_layers=1, dec_layers=1, ff_dim=32, dropout=0.0
    )
    model = TranslatorWithMLM(cfg_m).eval()
    with torch.no_grad():
        model.src_mlm_bias.normal_()
    src, tgt = torch.randint(4, 30, (2, 6)), torch.randint(4, 25, (2, 5))
    x = src.clone()
    target = torch.full_like(src, -100)
    x[0, 1], target[0, 1] = 1, src[0, 1]
    x[1, 4], target[1, 4] = 1, src[1, 4]
    cfg = TrainConfig(task="translator", objective="task+mlm", mlm_weight=0.5, label_smoothing=0.0)
    recipe = recipes.TranslatorWithMLMRecipe()
    got, n = recipe.loss(model, (src, tgt, x, target), cfg)
    logits, _ = model(src, tgt[:, :-1])
    task = F.cross_entropy(logits.flatten(0, 1), tgt[:, 1:].flatten())
    states, _ = model.encode(x)
    words = states @ model.src_emb.weight.T + model.src_mlm_bias
    mlm = -(F.log_softmax(words[0, 1], -1)[src[0, 1]] + F.log_softmax(words[1, 4], -1)[src[1, 4]]) / 2
    torch.testing.assert_close(got, task + 0.5 * mlm)
    assert n == tgt[:, 1:].numel()
    nothing_hidden = torch.full_like(src, -100)
    alone, _ = recipe.loss(model, (src, tgt, src, nothing_hidden), cfg)
    torch.testing.assert_close(alone, task)  # no hidden word: the translation loss alone, not NaN
    shipped = recipe.shipped(model)
    assert "src_mlm_bias" not in shipped.state_dict()
    torch.testing.assert_close(shipped.eval()(src, tgt)[0], model(src, tgt)[0])


def test_a_translator_trained_with_the_masked_loss_ships_a_plain_translator(data, tmp_path):  # noqa: F811
    from model.nets.translator import Translator

    start = tmp_path / "start"
    train("translator", data, start, tmp_path / "w0", "--epochs", "1")
    out, work = tmp_path / "out", tmp_path / "work"
    extra = f"--objective task+mlm --mlm-weight 0.3 --init-from {start} --epochs 2 --keep-snapshots"
    state = train("translator", data, out, work, *extra.split())
    assert [h["epoch"] for h in state["history"]] == [1, 2] and all("val_bleu" in h for h in state["history"])
    ck = load_checkpoint(out, task="translator")  # strict: no masked-LM bias in it
    assert type(ck.model) is Translator
    assert ck.training["objective"] == "task+mlm" and ck.training["mlm_weight"] == 0.3
    snap = load_file(str(work / "epoch002.safetensors"))
    assert snap["src_mlm_bias"].abs().sum() > 0  # the masked-LM head trained beside the translation
