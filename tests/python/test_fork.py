"""Forked children (multiprocessing, DataLoader workers) record into their own streams."""

import json


def test_multiprocessing_fork_children_record_into_their_own_streams(record):
    result = record("""
        import json
        import multiprocessing
        import os
        import stepscope

        def child(count):
            for _ in range(count):
                with stepscope.annotate("child-work"):
                    stepscope.mark("child-mark")

        if __name__ == "__main__":
            with stepscope.annotate("before-fork"):
                pass
            context = multiprocessing.get_context("fork")
            expected = {}
            for count in (1, 2, 3):
                process = context.Process(target=child, args=(count,))
                process.start()
                process.join()
                assert process.exitcode == 0
                expected[process.pid] = count
            with stepscope.annotate("after-fork"):
                pass
            print(json.dumps({"parent": os.getpid(), "children": expected}))
    """)
    pids = json.loads(result.stdout)
    run = result.run
    assert run.problems == []
    by_pid = run.counts_by_pid("span")
    expected = {pids["parent"]: {"before-fork": 1, "after-fork": 1}}
    for pid, count in pids["children"].items():
        expected[int(pid)] = {"child-work": count}
    assert by_pid == expected
    assert not any(span["unfinished"] for span in run.spans())
    marks = run.counts_by_pid("instant")
    assert marks == {int(pid): {"child-mark": count} for pid, count in pids["children"].items()}
    assert sorted(stream["pid"] for stream in run.streams) == sorted(expected)
    children = [stream for stream in run.streams if stream["pid"] != pids["parent"]]
    assert all(stream["ppid"] == pids["parent"] for stream in children)


def test_dataloader_workers_record_their_getitem_spans(record):
    result = record("""
        import json
        import os
        import stepscope
        import torch
        from torch.utils.data import DataLoader, Dataset

        class Squares(Dataset):
            def __len__(self):
                return 20

            def __getitem__(self, index):
                with stepscope.annotate("getitem"):
                    return torch.tensor([index * index], dtype=torch.float32)

        if __name__ == "__main__":
            loader = DataLoader(Squares(), batch_size=4, num_workers=2, multiprocessing_context="fork")
            total = 0.0
            for batch in loader:
                with stepscope.annotate("train-batch"):
                    total += float(batch.sum())
            print(json.dumps({"parent": os.getpid(), "total": total}))
    """, timeout=300)
    out = json.loads(result.stdout)
    assert out["total"] == sum(i * i for i in range(20))
    run = result.run
    assert run.problems == []
    by_pid = run.counts_by_pid("span")
    assert by_pid.pop(out["parent"]) == {"train-batch": 5}
    assert len(by_pid) == 2, by_pid  # one stream per worker
    assert all(set(names) == {"getitem"} for names in by_pid.values())
    assert sum(names["getitem"] for names in by_pid.values()) == 20
    assert not any(span["unfinished"] for span in run.spans())
    assert sorted(names["getitem"] for names in by_pid.values()) == [8, 12]  # batches go round-robin: 3 and 2
