"""A tiny "training" loop for the compare end-to-end test: N TRAIN steps of a fixed length.

    python3 tiny_train.py STEP_SECONDS [STEPS]
"""

import sys
import time

import stepscope

step_s = float(sys.argv[1])
steps = int(sys.argv[2]) if len(sys.argv) > 2 else 30
for _ in range(steps):
    with stepscope.step(phase="TRAIN"):
        with stepscope.annotate("Forward"):
            time.sleep(step_s * 0.5)
        time.sleep(step_s * 0.5)
