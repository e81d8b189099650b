"""A custom rule: steps slower than a fixed threshold (docs/custom-rules.md walks through it).

    stepscope rules stepscope-runs/<job> --custom examples/rules/slow_steps.py \
        --rule SlowSteps.threshold_ms=80
"""

from stepscope.analysis import Rule


class SlowSteps(Rule):
    name = "SlowSteps"
    description = "Flags steps slower than a fixed threshold."
    recommendation = "Look at what ran in the slow steps: a checkpoint, a log call, a synchronisation."
    parameters = {"threshold_ms": 100, "phase": "TRAIN"}

    def __init__(self):
        self.steps_seen = 0
        self.slow = []  # (node, step, start_ns, end_ns)

    def evaluate(self, window):
        # Called once per window (60 s by default), in time order; events start in the window.
        phase = "Step:ModeKeys." + self.params["phase"]
        limit_ns = self.params["threshold_ms"] * 1e6
        found = False
        for event in window.events(phase=phase):
            self.steps_seen += 1
            if event["end_ns"] - event["start_ns"] > limit_ns:
                self.slow.append((event["node"], event["step"], event["start_ns"], event["end_ns"]))
                found = True
        return found  # the condition held in this window

    def report(self):
        findings = []
        if self.slow:
            findings.append({
                "id": f"SlowSteps/{self.params['phase']}",
                "title": f"{len(self.slow)} {self.params['phase']} steps took longer than "
                         f"{self.params['threshold_ms']:g} ms",
                "severity": "warning",
                "next_step": "Open the slowest step in the report's timeline.",
                "evidence": [{"node": node, "start_ns": start, "end_ns": end, "steps": [step],
                              "step_phase": self.params["phase"],
                              "what": f"step {step}: {(end - start) / 1e6:.1f} ms"}
                             for node, step, start, end in self.slow[:10]],
            })
        return {"triggered": int(bool(self.slow)), "violations": len(self.slow), "datapoints": self.steps_seen,
                "details": {"slow_steps": [step for _, step, _, _ in self.slow]}, "findings": findings}
